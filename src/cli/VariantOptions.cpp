// The variant compiler's shared options (VariantOptions.h).
#include "cli/VariantOptions.h"

#include "compile/CompileCommands.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"

namespace r3::cli {

Expected<std::optional<uint32_t>> boundedOption(const ParsedArgs &A,
                                                std::string_view Name,
                                                uint64_t Min, uint64_t Max) {
  auto V = A.value(Name);
  if (!V)
    return std::optional<uint32_t>();
  auto N = parseUnsigned(*V);
  if (!N || *N < Min || *N > Max)
    return makeError("option '", Name, "' expects an integer from ", Min,
                     " to ", Max, ", got '", *V, "'");
  return std::optional<uint32_t>(static_cast<uint32_t>(*N));
}

namespace {
Error parseBounds(const ParsedArgs &A, CompileSettings &S) {
  auto V = A.value("--launch-bounds");
  if (!V)
    return Error::success();
  auto B = parseLaunchBounds(*V);
  if (!B || !*B)
    return makeError("option '--launch-bounds' expects THREADS[,BLOCKS] with "
                     "THREADS from 1 to 1024, got '",
                     *V, "'");
  S.Bounds = *B;
  return Error::success();
}
} // namespace

Error parseCompilerSettings(const ParsedArgs &A, CompileSettings &S,
                            const std::string &Specialize) {
  std::optional<uint32_t> Opt, Regs;
  R3_TRY(moveInto(boundedOption(A, "--codegen-opt", 0, 3), Opt));
  if (auto V = A.value("--codegen-opt"); V && !Opt)
    return makeError("option '--codegen-opt' expects 0, 1, 2 or 3");
  if (Opt)
    S.CodegenOpt = static_cast<int>(*Opt);
  R3_TRY(moveInto(boundedOption(A, "--max-registers", 16, 255), Regs));
  S.MaxRegisters = Regs.value_or(0);
  S.Pipeline = A.value("--pipeline").value_or("");
  std::string Toolchain;
  R3_TRY(moveInto(
      choiceValue(A, "--toolchain", {"llvm", "nvrtc", "nvcc"}, "llvm"),
      Toolchain));
  S.Toolchain = *parseCudaToolchain(Toolchain);
  S.FastMath = A.has("--fast-math");
  S.NvccOptions = splitCommandLine(A.value("--nvcc-options").value_or(""));
  if (!S.NvccOptions.empty() && S.Toolchain != CudaToolchain::Nvcc)
    return Error::make("option '--nvcc-options' needs --toolchain nvcc");
  std::string Words = A.value("--specialize").value_or(Specialize);
  if (Error E = parseSpecialize(Words, S))
    return makeError("option '--specialize' expects args, dims, args,dims or "
                     "none, got '",
                     Words, "'");
  return parseBounds(A, S);
}

std::vector<std::string> settingsWords(const CompileSettings &S) {
  std::vector<std::string> W;
  if (S.Toolchain != CudaToolchain::Llvm)
    W.insert(W.end(), {"--toolchain", cudaToolchainName(S.Toolchain)});
  if (!S.Pipeline.empty())
    W.insert(W.end(), {"--pipeline", S.Pipeline});
  if (S.CodegenOpt >= 0)
    W.insert(W.end(), {"--codegen-opt", std::to_string(S.CodegenOpt)});
  if (S.MaxRegisters > 0)
    W.insert(W.end(), {"--max-registers", std::to_string(S.MaxRegisters)});
  if (S.Bounds)
    W.insert(W.end(), {"--launch-bounds", launchBoundsText(S.Bounds)});
  if (S.FastMath)
    W.push_back("--fast-math");
  if (S.specialized())
    W.insert(W.end(), {"--specialize", specializeText(S)});
  if (!S.NvccOptions.empty())
    W.insert(W.end(), {"--nvcc-options", join(S.NvccOptions, " ")});
  return W;
}

Expected<std::vector<std::string>>
parseCompilerFlags(const ParsedArgs &A, const std::string &Source) {
  std::vector<std::string> Flags;
  if (auto DB = A.value("--compile-commands")) {
    if (!pathExists(*DB))
      return makeError("option '--compile-commands': no such file '", *DB, "'");
    R3_TRY(moveInto(flagsFromCompileCommands(*DB, Source), Flags));
  }
  for (std::string &F : splitCommandLine(A.value("--cflags").value_or("")))
    Flags.push_back(std::move(F));
  return Flags;
}

} // namespace r3::cli
