// `r3 compile`: run the variant compiler alone and print its resource report.
// Every option is checked here before anything is compiled; the CUDA variant
// compiler (compile/cuda/CudaCompiler.h) does the work and needs no GPU.
#include "cli/Command.h"

#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "compile/CompileCommands.h"
#include "r3/BuildConfig.h"
#include "support/FileUtil.h"
#include "support/Paths.h"
#include "support/StringUtil.h"

#if R3_HAVE_CUDA
#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "cli/VariantOptions.h"
#include "compile/cuda/CudaCompiler.h"
#include "compile/cuda/VariantOptions.h"
#include "support/Demangle.h"

#include <nlohmann/json.hpp>
#endif

#include <cstdio>
#include <fstream>
#include <tuple>
#include <utility>

namespace r3::cli {

#if R3_HAVE_CUDA
namespace {
using nlohmann::json;

/// What to compile and what to do with it, from the command line.
struct CompilePlan {
  VariantSource Source;
  CompileSettings Settings;
  /// The compute capability: --arch, else the capture's, else the build's
  /// default; none: the capture's.
  std::optional<std::pair<int, int>> Arch;
  std::string CacheDir;
  std::optional<std::string> Capture, Output;
  std::optional<LaunchRef> Launch; ///< none: the kernel's first recorded
  std::string Emit = "cubin";
  bool Json = false;
  CudaCompileOptions Options; ///< built from the above (buildOptions)
};

Expected<std::string> required(const ParsedArgs &A, std::string_view Name,
                               std::string_view Example) {
  auto V = A.value(Name);
  if (!V || V->empty())
    return makeError("option '", Name, "' is required (", Example, ")");
  return *V;
}

/// --arch, else the build's default (R3_DEFAULT_CUDA_ARCH), else an error.
Expected<std::string> archOption(const ParsedArgs &A) {
  auto V = A.value("--arch");
  if (V && !V->empty())
    return *V;
  if (*DefaultCudaArch)
    return std::string(DefaultCudaArch);
  return Error::make("option '--arch' is required (--arch sm_90): this r3 was "
                     "built without a default architecture "
                     "(R3_DEFAULT_CUDA_ARCH)");
}

/// sm_90 → (9, 0), sm_100 → (10, 0), sm_86 → (8, 6).
Expected<std::pair<int, int>> parseArch(const std::string &Arch) {
  std::string Digits = Arch.size() > 3 ? Arch.substr(3) : "";
  bool Ok = Arch.compare(0, 3, "sm_") == 0 &&
            (Digits.size() == 2 || Digits.size() == 3) &&
            Digits.find_first_not_of("0123456789") == std::string::npos &&
            Digits[0] != '0';
  if (!Ok)
    return makeError("option '--arch' expects sm_NN such as sm_90, got '", Arch,
                     "'");
  int Major = Digits.size() == 3 ? (Digits[0] - '0') * 10 + Digits[1] - '0'
                                 : Digits[0] - '0';
  return std::pair<int, int>(Major, Digits.back() - '0');
}

/// --capture, --launch and --specialize (with a capture, args,dims unless
/// --specialize says otherwise).
Error parseCapture(const ParsedArgs &A, CompilePlan &P) {
  P.Capture = A.value("--capture");
  if (A.has("--specialize") && !P.Capture)
    return Error::make("option '--specialize' needs --capture: the recorded "
                       "values come from a capture");
  if (auto L = A.value("--launch")) {
    if (!P.Capture)
      return Error::make("option '--launch' needs --capture");
    P.Launch = parseLaunchRef(*L);
    if (!P.Launch)
      return makeError("option '--launch' expects a launch of the kernel (N) "
                       "or the capture's launch N (@N), got '",
                       *L, "'");
  }
  return parseCompilerSettings(A, P.Settings, P.Capture ? "args,dims" : "none");
}

Error parseOutput(const ParsedArgs &A, CompilePlan &P) {
  P.Output = A.value("--output");
  R3_TRY(moveInto(choiceValue(A, "--emit", {"ir", "ptx", "cubin"}, "cubin"),
                  P.Emit));
  if (A.has("--emit") && !P.Output)
    return Error::make("option '--emit' needs -o FILE: where to write it");
  if (P.Emit == "ptx" && P.Settings.Toolchain == CudaToolchain::Nvcc)
    return Error::make("option '--emit ptx' needs the llvm or nvrtc "
                       "toolchain: nvcc compiles straight to a cubin here");
  if (P.Emit == "ir" && P.Settings.Toolchain != CudaToolchain::Llvm)
    return makeError("option '--emit ir' needs the llvm toolchain: ",
                     cudaToolchainName(P.Settings.Toolchain),
                     " makes no LLVM IR");
  std::string Format;
  R3_TRY(
      moveInto(choiceValue(A, "--format", {"table", "json"}, "table"), Format));
  P.Json = Format == "json";
  P.CacheDir = A.value("--cache-dir").value_or(defaultCacheDir());
  return Error::success();
}

Expected<CompilePlan> parsePlan(const ParsedArgs &A) {
  if (!A.Positional.empty())
    return makeError("unexpected argument '", A.Positional[0],
                     "' (the source is given with --source)");
  CompilePlan P;
  VariantSource &Src = P.Source;
  R3_TRY(moveInto(required(A, "--source", "--source FILE.cu"), Src.Path));
  if (!pathExists(Src.Path))
    return makeError("option '--source': no such file '", Src.Path, "'");
  R3_TRY(moveInto(required(A, "--kernel", "--kernel NAME"), Src.Kernel));
  R3_TRY(parseCapture(A, P));
  if (A.has("--arch") || !P.Capture) {
    std::string Arch;
    R3_TRY(moveInto(archOption(A), Arch));
    R3_TRY(moveInto(parseArch(Arch), P.Arch));
  }
  R3_TRY(parseOutput(A, P));
  return P;
}

// --- the capture's values ---

/// The capture index of the launch to specialize on: --launch, else the
/// kernel's first recorded launch.
Expected<uint32_t> launchOf(const CaptureReader &R, const CompilePlan &P) {
  uint32_t K = 0;
  R3_TRY(moveInto(findKernel(R, P.Source.Kernel), K));
  if (P.Launch)
    return findLaunch(R, K, *P.Launch);
  std::vector<uint32_t> Mine = launchesOf(viewOf(R), K);
  if (Mine.empty())
    return makeError(R.path(), ": the capture holds no launch of kernel '",
                     P.Source.Kernel, "'");
  return Mine.front();
}

/// The compile options: the capture's launch (when there is one), then the
/// architecture --arch names (else the capture's, else the default).
Error buildOptions(CompilePlan &P) {
  std::unique_ptr<CaptureReader> R;
  VariantLaunch L;
  if (P.Capture) {
    R3_TRY(moveInto(CaptureReader::open(*P.Capture), R));
    if (R->header().Source != Backend::Cuda)
      return makeError(*P.Capture, ": a host capture; r3 compile compiles "
                                   "CUDA kernels");
    L.Capture = R.get();
    R3_TRY(moveInto(launchOf(*R, P), L.Index));
  }
  R3_TRY(moveInto(cudaCompileOptions(P.Source, P.Settings, L, P.CacheDir),
                  P.Options));
  if (P.Arch)
    std::tie(P.Options.ComputeMajor, P.Options.ComputeMinor) = *P.Arch;
  return Error::success();
}

// --- output ---

Error writeOutput(const CompilePlan &P, const CudaCompiled &C) {
  if (!P.Output)
    return Error::success();
  std::string Bytes = P.Emit == "ir" ? C.Ir
                      : P.Emit == "ptx"
                          ? C.Ptx
                          : std::string(C.Cubin.begin(), C.Cubin.end());
  return writeFileAtomically(*P.Output, Bytes);
}

json optional(int64_t V) { return V < 0 ? json(nullptr) : json(V); }

json reportJson(const CompilePlan &P, const CudaCompileReport &R) {
  return {{"kernel", R.Kernel},
          {"demangled", demangle(R.Kernel)},
          {"toolchain", cudaToolchainName(P.Settings.Toolchain)},
          {"pipeline", R.Pipeline.empty() ? json(nullptr) : json(R.Pipeline)},
          {"codegen_opt", R.CodegenOpt},
          {"registers", optional(R.Registers)},
          {"spills", optional(R.Spills)},
          {"shared_bytes", optional(R.SharedBytes)},
          {"local_bytes", optional(R.LocalBytes)},
          {"ptx_bytes", R.PtxBytes},
          {"compile_ms", R.CompileMs},
          {"frontend_ms", R.FrontendMs},
          {"opt_ms", R.OptMs},
          {"codegen_ms", R.CodegenMs},
          {"link_ms", R.LinkMs},
          {"frontend_cached", R.FrontendCached},
          {"ptx_cached", R.PtxCached},
          {"cubin_cached", R.CubinCached},
          {"param_names", R.ParamNames},
          {"output", P.Output ? json(*P.Output) : json(nullptr)},
          {"emit", P.Output ? json(P.Emit) : json(nullptr)},
          {"log", R.Log}};
}

std::string valueText(const json &V) { return V.is_null() ? "-" : V.dump(); }

void printTable(const json &J) {
  auto Cached = [&J](const char *Key) {
    return J[Key].get<bool>() ? " (cached)" : "";
  };
  std::printf("kernel     %s\n", J["demangled"].get<std::string>().c_str());
  std::printf("mangled    %s\n", J["kernel"].get<std::string>().c_str());
  std::printf(
      "toolchain  %s, pipeline %s, codegen -O%d\n",
      J["toolchain"].get<std::string>().c_str(),
      J["pipeline"].is_null() ? "-" : J["pipeline"].get<std::string>().c_str(),
      J["codegen_opt"].get<int>());
  std::printf("registers  %s\nspills     %s bytes\nshared     %s bytes\n"
              "local      %s bytes\nptx        %s bytes\n",
              valueText(J["registers"]).c_str(), valueText(J["spills"]).c_str(),
              valueText(J["shared_bytes"]).c_str(),
              valueText(J["local_bytes"]).c_str(),
              valueText(J["ptx_bytes"]).c_str());
  std::printf("compile    %.1f ms: front end %.1f ms%s, opt %.1f ms%s, "
              "codegen %.1f ms, link %.1f ms%s\n",
              J["compile_ms"].get<double>(), J["frontend_ms"].get<double>(),
              Cached("frontend_cached"), J["opt_ms"].get<double>(),
              Cached("ptx_cached"), J["codegen_ms"].get<double>(),
              J["link_ms"].get<double>(), Cached("cubin_cached"));
  if (!J["output"].is_null())
    std::printf("wrote      %s (%s)\n", J["output"].get<std::string>().c_str(),
                J["emit"].get<std::string>().c_str());
}

int runCompile(const ParsedArgs &A) {
  auto P = parsePlan(A);
  if (!P)
    return usageError(P.error().message(), "compile");
  auto Flags = parseCompilerFlags(A, P->Source.Path);
  if (!Flags)
    return fail(Flags.takeError());
  P->Source.Flags = std::move(*Flags);
  if (Error E = buildOptions(*P))
    return fail(E);
  auto C = compileCudaKernelIsolated(P->Options);
  if (!C)
    return fail(C.takeError());
  if (Error E = writeOutput(*P, *C))
    return fail(E);
  json J = reportJson(*P, C->Report);
  if (P->Json)
    std::printf("%s\n", J.dump().c_str());
  else
    printTable(J);
  return ExitSuccess;
}

} // namespace
#endif

CommandSpec withVariantCompilerOptions(CommandSpec C) {
  const OptionSpec Shared[] = {
      {"--compile-commands", "", Arity::Value, "FILE",
       "take compiler flags from a compile_commands.json"},
      {"--cflags", "", Arity::Value, "FLAGS", "compiler flags"},
      {"--pipeline", "", Arity::Value, "PIPELINE",
       "LLVM new-pass-manager pipeline"},
      {"--codegen-opt", "", Arity::Value, "0-3", "code generation opt level"},
      {"--max-registers", "", Arity::Value, "N", "register limit per thread"},
      {"--launch-bounds", "", Arity::Value, "T[,B]", "launch bounds to apply"},
      {"--fast-math", "", Arity::Flag, "",
       "fast, less precise arithmetic (denormals flushed)"},
      {"--nvcc-options", "", Arity::Value, "OPTIONS",
       "more nvcc options (--toolchain nvcc)"}};
  // After the command's first three options (what to compile or replay).
  C.Options.insert(C.Options.begin() + 3, std::begin(Shared), std::end(Shared));
  return C;
}

CommandSpec compileCommand() {
  CommandSpec C {
    "compile",
        "compile a kernel variant and print its resource report (no GPU "
        "needed)",
        "--source FILE.cu --kernel NAME --arch sm_XX [options]",
        "The kernel is compiled device-only (clang-19 -> LLVM IR -> the "
        "pipeline -> NVPTX -> PTX -> nvJitLink, or NVRTC with --toolchain "
        "nvrtc) and its registers, spills, shared and local memory are "
        "reported. With --capture, the first recorded launch of the kernel (or "
        "--launch N: the kernel's launch N, counted from 0 in the order the "
        "application launched it, as r3 record --launch and r3 inspect number "
        "it; --launch @N: the capture's launch N) is folded in as "
        "constants: its scalar arguments (args) and its block and grid "
        "dimensions (dims); the default is args,dims. "
        "Stages are cached under --cache-dir, else $R3_CACHE_DIR, else "
        "$XDG_CACHE_HOME/r3, else ~/.cache/r3.",
        {{"--source", "", Arity::Value, "FILE", "the kernel's source file"},
         {"--kernel", "", Arity::Value, "NAME", "the kernel to compile"},
         {"--arch", "", Arity::Value, "sm_XX",
          "target compute capability (default: the build's, shown by r3 "
          "--version)"},
         {"--toolchain", "", Arity::Value, "llvm|nvrtc|nvcc",
          "which compiler to use"},
         {"--capture", "", Arity::Value, "CAPTURE.h5",
          "recorded values to specialize on"},
         {"--specialize", "", Arity::Value, "args|dims|args,dims|none",
          "what of the recorded launch to fold in (needs --capture)"},
         {"--launch", "", Arity::Value, "N|@N",
          "the recorded launch to specialize on: the kernel's launch N, or the "
          "capture's @N (default: the kernel's first)"},
         {"--emit", "", Arity::Value, "ir|ptx|cubin", "what -o writes"},
         {"--output", "-o", Arity::Value, "FILE",
          "write the compiled result here"},
         {"--cache-dir", "", Arity::Value, "DIR", "the compile cache"},
         {"--format", "", Arity::Value, "table|json", "output format"}},
        false,
#if R3_HAVE_CUDA
        runCompile
  };
#else
        nullptr
  };
#endif
  return withVariantCompilerOptions(std::move(C));
}

} // namespace r3::cli
