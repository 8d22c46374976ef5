// compileCudaKernel (CudaCompiler.h): the stages of Stages.h strung together,
// each behind the compile cache. The keys (SHA-256 of the lines below):
//
//   ir     the source text, the flags, the architecture, the front end's
//          identity (clang, toolkit, shim); plus the manifest of the files
//          clang read, checked on lookup
//   ptx    the front-end bitcode, the kernel, the pipeline, what is
//          specialized, the bounds and the register limit, the codegen level,
//          LLVM's version; for NVRTC, the source, flags and NVRTC's version
//   cubin  the PTX, the architecture, the codegen level, the register limit,
//          nvJitLink's version
//
// so that a launch-only variant compiles nothing and a pipeline variant
// reuses the front end.
#include "compile/Isolate.h"
#include "support/Clock.h"
#include "compile/cuda/CompileCache.h"
#include "compile/cuda/Stages.h"
#include "support/Sha256.h"
#include "support/StringUtil.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <cstring>
#include <span>

namespace r3 {

namespace {

using namespace cuda;
using Clock = std::chrono::steady_clock;

std::string keyOf(const std::vector<std::string> &Parts) {
  Sha256 H;
  for (const std::string &P : Parts) {
    H.update(std::to_string(P.size()) + ":");
    H.update(P);
  }
  return H.hexDigest();
}

/// One compile: the options, the cache, and what has been made so far.
struct Job {
  const CudaCompileOptions &O;
  CompileCache Cache;
  CudaCompiled Out;
  std::string PtxKeyBase; ///< what the ptx key adds the pipeline etc. to
};

std::string defaultPipeline() { return "default<O3>"; }

Error validate(const CudaCompileOptions &O) {
  if (O.Settings.CodegenOpt < 0 || O.Settings.CodegenOpt > 3)
    return makeError("codegen optimization level ", O.Settings.CodegenOpt,
                     ": expected 0, 1, 2 or 3");
  if (O.ComputeMajor < 5 || O.ComputeMinor < 0 || O.ComputeMinor > 9)
    return makeError("compute capability ", O.ComputeMajor, ".", O.ComputeMinor,
                     ": expected sm_50 or newer");
  if (O.Settings.specialized() && !O.Specialize)
    return Error::make("specialization needs the recorded launch's values "
                       "(build the options with cudaCompileOptions)");
  if (O.Settings.Toolchain == CudaToolchain::Llvm)
    return Error::success();
  const char *Name = cudaToolchainName(O.Settings.Toolchain);
  if (!O.Settings.Pipeline.empty() && O.Settings.Pipeline != defaultPipeline())
    return makeError("pipeline '", O.Settings.Pipeline, "': the ", Name,
                     " toolchain runs no LLVM pipeline; use the llvm "
                     "toolchain, or pass ",
                     Name, " flags instead");
  if (O.Settings.specialized())
    return makeError("specialization rewrites LLVM IR: it needs the llvm "
                     "toolchain, not ",
                     Name);
  if (O.Settings.Toolchain == CudaToolchain::Nvcc && O.Settings.Bounds)
    return Error::make("launch bounds are applied to LLVM IR or PTX: they "
                       "need the llvm or nvrtc toolchain, not nvcc (write "
                       "__launch_bounds__ in the source instead)");
  return Error::success();
}

// --- the front end ---

Expected<std::string> frontendKey(const CudaCompileOptions &O) {
  auto Text = readFileBytes(O.SourcePath);
  if (!Text)
    return makeError("source file '", O.SourcePath, "' does not exist");
  return keyOf({"ir-1", *Text, frontendIdentity(O)});
}

Expected<std::string> frontendBitcode(Job &J) {
  std::string Key;
  R3_TRY(moveInto(frontendKey(J.O), Key));
  auto Hit = J.Cache.lookup("ir", Key, {"bc", "deps"});
  if (Hit && CompileCache::manifestHolds((*Hit)["deps"])) {
    J.Out.Report.FrontendCached = true;
    return (*Hit)["bc"];
  }
  FrontendOutput F;
  R3_TRY(moveInto(runFrontend(J.O), F));
  if (J.Cache.enabled()) {
    std::string Manifest;
    R3_TRY(moveInto(CompileCache::manifestOf(F.Dependencies), Manifest));
    R3_TRY(J.Cache.store("ir", Key, {{"bc", F.Bitcode}, {"deps", Manifest}}));
  }
  return F.Bitcode;
}

/// The extracted kernel module of the front end's bitcode.
Expected<std::unique_ptr<llvm::Module>> frontendModule(Job &J,
                                                       llvm::LLVMContext &Ctx) {
  auto Start = Clock::now();
  std::string Bitcode;
  R3_TRY(moveInto(frontendBitcode(J), Bitcode));
  std::unique_ptr<llvm::Module> Full;
  R3_TRY(moveInto(
      parseBitcode(Bitcode, Ctx, "clang's output for '" + J.O.SourcePath + "'"),
      Full));
  std::string Kernel;
  R3_TRY(moveInto(resolveKernel(*Full, J.O.Kernel, J.O.SourcePath), Kernel));
  J.Out.Report.Kernel = Kernel;
  J.Out.Report.ParamNames = parameterNames(*Full, Kernel);
  J.PtxKeyBase = sha256Hex(Bitcode);
  auto M = extractCuda(*Full, Kernel);
  J.Out.Report.FrontendMs = msSince(Start);
  return M;
}

// --- IR → PTX ---

std::string ptxKey(const Job &J) {
  return keyOf({"ptx-1", J.PtxKeyBase, J.Out.Report.Kernel,
                J.Out.Report.Pipeline, specializationKey(J.O),
                smName(J.O.ComputeMajor, J.O.ComputeMinor),
                std::to_string(J.O.Settings.CodegenOpt), LLVM_VERSION_STRING});
}

Error optimizeAndEmit(Job &J, llvm::Module &M) {
  auto Start = Clock::now();
  std::unique_ptr<llvm::TargetMachine> TM;
  R3_TRY(moveInto(
      nvptxMachine(J.O.ComputeMajor, J.O.ComputeMinor, J.O.Settings.CodegenOpt),
      TM));
  if (J.O.Specialize)
    R3_TRY(specialize(M, J.Out.Report.Kernel, J.O.Settings, *J.O.Specialize));
  applyBounds(M, J.Out.Report.Kernel, J.O.Settings.Bounds,
              J.O.Settings.MaxRegisters);
  R3_TRY(optimize(M, J.Out.Report.Pipeline, *TM));
  J.Out.Ir = irText(M);
  J.Out.Report.OptMs = msSince(Start);
  Start = Clock::now();
  R3_TRY(moveInto(emitPtx(M, *TM), J.Out.Ptx));
  J.Out.Report.CodegenMs = msSince(Start);
  return Error::success();
}

Error llvmPtx(Job &J) {
  llvm::LLVMContext Ctx;
  std::unique_ptr<llvm::Module> M;
  R3_TRY(moveInto(frontendModule(J, Ctx), M));
  auto Start = Clock::now();
  std::string Key = ptxKey(J);
  if (auto Hit = J.Cache.lookup("ptx", Key, {"ptx", "ll"})) {
    J.Out.Ptx = (*Hit)["ptx"];
    J.Out.Ir = (*Hit)["ll"];
    J.Out.Report.PtxCached = true;
    J.Out.Report.OptMs = msSince(Start);
    return Error::success();
  }
  R3_TRY(optimizeAndEmit(J, *M));
  return J.Cache.store("ptx", Key, {{"ptx", J.Out.Ptx}, {"ll", J.Out.Ir}});
}

Error nvrtcPtx(Job &J) {
  auto Start = Clock::now();
  auto Text = readFileBytes(J.O.SourcePath);
  if (!Text)
    return makeError("source file '", J.O.SourcePath, "' does not exist");
  std::string Key =
      keyOf({"nvrtc-2", *Text, join(J.O.Flags, "\n"), J.O.Kernel,
             std::to_string(J.O.Settings.MaxRegisters),
             J.O.Settings.FastMath ? "fast-math" : "", specializationKey(J.O),
             smName(J.O.ComputeMajor, J.O.ComputeMinor), nvrtcIdentity()});
  if (auto Hit = J.Cache.lookup("ptx", Key, {"ptx", "kernel"})) {
    J.Out.Ptx = (*Hit)["ptx"];
    J.Out.Report.Kernel = (*Hit)["kernel"];
    J.Out.Report.PtxCached = J.Out.Report.FrontendCached = true;
  } else {
    NvrtcOutput N;
    R3_TRY(moveInto(compileWithNvrtc(J.O), N));
    J.Out.Ptx = std::move(N.Ptx);
    J.Out.Report.Kernel = N.Kernel;
    R3_TRY(
        J.Cache.store("ptx", Key, {{"ptx", J.Out.Ptx}, {"kernel", N.Kernel}}));
  }
  J.Out.Report.FrontendMs = msSince(Start);
  return Error::success();
}

// --- nvcc: source → cubin in one step ---

Error nvccCubin(Job &J) {
  auto Start = Clock::now();
  auto Text = readFileBytes(J.O.SourcePath);
  if (!Text)
    return makeError("source file '", J.O.SourcePath, "' does not exist");
  std::string Key =
      keyOf({"nvcc-1", *Text, J.O.SourcePath, join(J.O.Flags, "\n"),
             join(J.O.Settings.NvccOptions, "\n"), J.O.Kernel,
             smName(J.O.ComputeMajor, J.O.ComputeMinor),
             std::to_string(J.O.Settings.CodegenOpt),
             std::to_string(J.O.Settings.MaxRegisters),
             J.O.Settings.FastMath ? "fast-math" : "", nvccIdentity()});
  auto Hit = J.Cache.lookup("cubin", Key, {"cubin", "log", "kernel", "deps"});
  if (Hit && CompileCache::manifestHolds((*Hit)["deps"])) {
    J.Out.Cubin.assign((*Hit)["cubin"].begin(), (*Hit)["cubin"].end());
    J.Out.Report.Log = (*Hit)["log"];
    J.Out.Report.Kernel = (*Hit)["kernel"];
    J.Out.Report.FrontendCached = J.Out.Report.PtxCached =
        J.Out.Report.CubinCached = true;
  } else {
    NvccOutput N;
    R3_TRY(moveInto(compileWithNvcc(J.O), N));
    J.Out.Cubin = std::move(N.Cubin);
    J.Out.Report.Log = std::move(N.Log);
    J.Out.Report.Kernel = N.Kernel;
    if (J.Cache.enabled()) {
      std::string Manifest;
      R3_TRY(moveInto(CompileCache::manifestOf(N.Dependencies), Manifest));
      R3_TRY(J.Cache.store(
          "cubin", Key,
          {{"cubin", std::string(J.Out.Cubin.begin(), J.Out.Cubin.end())},
           {"log", J.Out.Report.Log},
           {"kernel", N.Kernel},
           {"deps", Manifest}}));
    }
  }
  J.Out.Report.LinkMs = msSince(Start);
  readResources(J.Out.Report.Log, J.Out.Cubin, J.Out.Report);
  return Error::success();
}

// --- PTX → cubin ---

Error cubin(Job &J) {
  auto Start = Clock::now();
  std::string Key =
      keyOf({"cubin-1", J.Out.Ptx, smName(J.O.ComputeMajor, J.O.ComputeMinor),
             std::to_string(J.O.Settings.CodegenOpt),
             std::to_string(J.O.Settings.MaxRegisters), linkerIdentity()});
  if (auto Hit = J.Cache.lookup("cubin", Key, {"cubin", "log"})) {
    J.Out.Cubin.assign((*Hit)["cubin"].begin(), (*Hit)["cubin"].end());
    J.Out.Report.Log = (*Hit)["log"];
    J.Out.Report.CubinCached = true;
  } else {
    LinkOutput L;
    R3_TRY(moveInto(linkPtx(J.Out.Ptx, J.O), L));
    J.Out.Cubin = std::move(L.Cubin);
    J.Out.Report.Log = std::move(L.Log);
    R3_TRY(J.Cache.store(
        "cubin", Key,
        {{"cubin", std::string(J.Out.Cubin.begin(), J.Out.Cubin.end())},
         {"log", J.Out.Report.Log}}));
  }
  J.Out.Report.LinkMs = msSince(Start);
  readResources(J.Out.Report.Log, J.Out.Cubin, J.Out.Report);
  return Error::success();
}

} // namespace

Expected<CudaCompiled> compileCudaKernel(const CudaCompileOptions &Given) {
  auto Start = Clock::now();
  CudaCompileOptions O = Given;
  if (O.Settings.CodegenOpt < 0)
    O.Settings.CodegenOpt = 3;
  R3_TRY(validate(O));
  Job J{O, CompileCache(O.CacheDir), {}, {}};
  bool Llvm = O.Settings.Toolchain == CudaToolchain::Llvm;
  J.Out.Report.Pipeline =
      Llvm ? (O.Settings.Pipeline.empty() ? defaultPipeline()
                                          : O.Settings.Pipeline)
           : "";
  J.Out.Report.CodegenOpt = O.Settings.CodegenOpt;
  if (O.Settings.Toolchain == CudaToolchain::Nvcc) {
    R3_TRY(nvccCubin(J));
    J.Out.Report.CompileMs = msSince(Start);
    return std::move(J.Out);
  }
  R3_TRY(Llvm ? llvmPtx(J) : nvrtcPtx(J));
  J.Out.Report.PtxBytes = J.Out.Ptx.size();
  R3_TRY(cubin(J));
  J.Out.Report.CompileMs = msSince(Start);
  return std::move(J.Out);
}

// --- the isolated compile: a CudaCompiled through a pipe ---

namespace {
void putBytes(std::vector<uint8_t> &Out, std::string_view B) {
  uint64_t N = B.size();
  const auto *P = reinterpret_cast<const uint8_t *>(&N);
  Out.insert(Out.end(), P, P + 8);
  Out.insert(Out.end(), B.begin(), B.end());
}

bool getBytes(std::span<const uint8_t> &In, std::string &B) {
  uint64_t N = 0;
  if (In.size() < 8)
    return false;
  std::memcpy(&N, In.data(), 8);
  if (In.size() - 8 < N)
    return false;
  B.assign(reinterpret_cast<const char *>(In.data()) + 8, N);
  In = In.subspan(8 + N);
  return true;
}

/// The report's fields as lines "key=value" (strings with newlines are
/// sent as their own byte fields).
std::vector<std::string> reportFields(const CudaCompileReport &R) {
  auto B = [](bool V) { return std::string(V ? "1" : "0"); };
  return {R.Kernel,
          R.Pipeline,
          std::to_string(R.Registers),
          std::to_string(R.Spills),
          std::to_string(R.SharedBytes),
          std::to_string(R.LocalBytes),
          std::to_string(R.PtxBytes),
          std::to_string(R.FrontendMs),
          std::to_string(R.OptMs),
          std::to_string(R.CodegenMs),
          std::to_string(R.LinkMs),
          B(R.FrontendCached) + B(R.PtxCached) + B(R.CubinCached),
          join(R.ParamNames, "\n"),
          R.Log,
          std::to_string(R.CodegenOpt)};
}

} // namespace

std::vector<uint8_t> serializeCompiled(const CudaCompiled &C) {
  std::vector<uint8_t> Out;
  putBytes(Out, C.Ir);
  putBytes(Out, C.Ptx);
  putBytes(Out, std::string_view(reinterpret_cast<const char *>(C.Cubin.data()),
                                 C.Cubin.size()));
  for (const std::string &F : reportFields(C.Report))
    putBytes(Out, F);
  return Out;
}

Expected<CudaCompiled> deserializeCompiled(std::span<const uint8_t> In) {
  CudaCompiled C;
  std::string Cubin;
  std::vector<std::string> F(15);
  bool Ok = getBytes(In, C.Ir) && getBytes(In, C.Ptx) && getBytes(In, Cubin);
  for (std::string &Field : F)
    Ok = Ok && getBytes(In, Field);
  if (!Ok || !In.empty() || F[11].size() != 3)
    return Error::make("compile: a malformed result from the compiler child");
  C.Cubin.assign(Cubin.begin(), Cubin.end());
  CudaCompileReport &R = C.Report;
  R.Kernel = F[0];
  R.Pipeline = F[1];
  Error E;
  auto Int = [&](const std::string &Text, auto &Out) {
    if (!E)
      E = moveInto(parseInteger(Text, -1, INT64_MAX), Out);
  };
  auto Real = [&](const std::string &Text, double &Out) {
    if (!E)
      E = moveInto(parseDouble(Text), Out);
  };
  Int(F[2], R.Registers);
  Int(F[3], R.Spills);
  Int(F[4], R.SharedBytes);
  Int(F[5], R.LocalBytes);
  Int(F[6], R.PtxBytes);
  Real(F[7], R.FrontendMs);
  Real(F[8], R.OptMs);
  Real(F[9], R.CodegenMs);
  Real(F[10], R.LinkMs);
  int64_t Level = 0;
  if (!E)
    E = moveInto(parseInteger(F[14], 0, 3), Level);
  R.CodegenOpt = static_cast<int>(Level);
  if (E)
    return std::move(E).context("compile: a malformed result from the "
                                "compiler child");
  R.FrontendCached = F[11][0] == '1';
  R.PtxCached = F[11][1] == '1';
  R.CubinCached = F[11][2] == '1';
  if (!F[12].empty())
    R.ParamNames = split(F[12], '\n');
  R.Log = F[13];
  return C;
}

Expected<CudaCompiled> compileCudaKernelIsolated(const CudaCompileOptions &O,
                                                 double TimeoutSeconds) {
  auto Start = Clock::now();
  auto Bytes = runIsolated(
      [&]() -> Expected<std::vector<uint8_t>> {
        CudaCompiled C;
        R3_TRY(moveInto(compileCudaKernel(O), C));
        return serializeCompiled(C);
      },
      TimeoutSeconds);
  if (!Bytes)
    return Bytes.takeError();
  CudaCompiled C;
  R3_TRY(moveInto(deserializeCompiled(*Bytes), C));
  C.Report.CompileMs = msSince(Start);
  return C;
}

} // namespace r3
