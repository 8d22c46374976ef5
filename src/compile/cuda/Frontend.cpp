// The CUDA front end: clang-19 compiles the source for the device only, to
// LLVM IR without running any LLVM pass (-O3 -Xclang -disable-llvm-passes:
// clang's -O3 code generation and attributes; the variant's pipeline decides
// every optimization). CUDA 13 needs two things clang-19 does not bring:
// -Wno-unknown-cuda-version and the header shim of share/r3/cuda-shim for the
// texture headers CUDA 13 removed. clang's -MD dependency file lists every
// file the source read, which is what the cache checks a front-end entry
// against. The kernel is then found by any of its names and extracted.
#include "capture/KernelLookup.h"
#include "compile/Extract.h"
#include "compile/cuda/Stages.h"
#include "compile/host/HostJit.h"
#include "support/FileUtil.h"
#include "support/Paths.h"
#include "support/Process.h"
#include "support/StringUtil.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace llvm;

namespace r3::cuda {

namespace {

std::string shimDir() { return shareDir() + "/cuda-shim"; }

/// What every clang-19 command line of a CUDA source's device side holds.
std::vector<std::string> deviceArgv(int Major, int Minor) {
  std::vector<std::string> Argv = {hostClang(),
                                   "-x",
                                   "cuda",
                                   "--cuda-device-only",
                                   "--cuda-gpu-arch=" + smName(Major, Minor),
                                   "-Wno-unknown-cuda-version",
                                   "--cuda-path=" + toolkitDir(),
                                   "-isystem",
                                   shimDir()};
  // nvcc adds CUDA 13's Thrust, CUB and libcu++ folder by itself; sources
  // that include <thrust/...> expect it.
  std::string Cccl = toolkitDir() + "/include/cccl";
  struct stat St {};
  if (::stat(Cccl.c_str(), &St) == 0 && S_ISDIR(St.st_mode)) {
    Argv.push_back("-isystem");
    Argv.push_back(Cccl);
  }
  return Argv;
}

std::vector<std::string> clangArgv(const CudaCompileOptions &O,
                                   const std::string &Output,
                                   const std::string &DepFile) {
  std::vector<std::string> Argv = deviceArgv(O.ComputeMajor, O.ComputeMinor);
  for (const char *A :
       {"-emit-llvm", "-c", "-O3", "-Xclang", "-disable-llvm-passes",
        "-fno-discard-value-names", "-MD", "-MF"})
    Argv.push_back(A);
  Argv.push_back(DepFile);
  Argv.push_back("-o");
  Argv.push_back(Output);
  Argv.push_back(O.SourcePath);
  if (O.Settings.FastMath) {
    Argv.push_back("-ffast-math");
    Argv.push_back("-fgpu-flush-denormals-to-zero");
  }
  Argv.insert(Argv.end(), O.Flags.begin(), O.Flags.end());
  return Argv;
}

/// A file the compiler child wrote; empty when it wrote none.
std::string readWhole(const std::string &Path) {
  auto Text = readWholeFile(Path, "compiler output");
  return Text ? std::move(*Text) : std::string();
}

/// The prerequisites of a Make rule as clang writes it: "out: a b \
///  c", with spaces in names escaped by a backslash.
std::vector<std::string> parseDepFile(const std::string &Text) {
  std::vector<std::string> Files;
  size_t Colon = Text.find(": ");
  std::string Cur;
  for (size_t I = Colon == std::string::npos ? 0 : Colon + 2; I < Text.size();
       ++I) {
    char C = Text[I];
    if (C == '\\' && I + 1 < Text.size() && Text[I + 1] == ' ') {
      Cur += ' ';
      ++I;
    } else if (C == '\\' && I + 1 < Text.size() && Text[I + 1] == '\n') {
      ++I;
    } else if (C == ' ' || C == '\n' || C == '\t' || C == '\r') {
      if (!Cur.empty())
        Files.push_back(std::move(Cur));
      Cur.clear();
    } else {
      Cur += C;
    }
  }
  if (!Cur.empty())
    Files.push_back(std::move(Cur));
  return Files;
}

bool isKernelAnnotation(const MDNode &N) {
  if (N.getNumOperands() < 3)
    return false;
  auto *Key = dyn_cast<MDString>(N.getOperand(1));
  return Key && Key->getString() == "kernel";
}

/// The module's kernels, mangled, in the order the module defines them.
std::vector<std::string> kernelsOf(const Module &M) {
  std::vector<std::string> Names;
  for (const Function &F : M)
    if (!F.isDeclaration() && F.getCallingConv() == CallingConv::PTX_Kernel)
      Names.push_back(F.getName().str());
  if (const NamedMDNode *A = M.getNamedMetadata("nvvm.annotations"))
    for (const MDNode *N : A->operands())
      if (isKernelAnnotation(*N))
        if (auto *F = mdconst::dyn_extract_or_null<Function>(N->getOperand(0));
            F && !F->isDeclaration())
          Names.push_back(F->getName().str());
  std::sort(Names.begin(), Names.end());
  Names.erase(std::unique(Names.begin(), Names.end()), Names.end());
  return Names;
}

} // namespace

std::vector<std::string> dependenciesOf(const std::string &DepFile) {
  return parseDepFile(readWhole(DepFile));
}

std::string smName(int Major, int Minor) {
  return "sm_" + std::to_string(Major) + std::to_string(Minor);
}

std::string toolkitDir() {
  if (const char *Env = std::getenv("R3_CUDA_PATH"); Env && *Env)
    return Env;
  return R3_CUDA_TOOLKIT_DIR;
}

std::string toolIdentity(const char *Name, const std::string &Path) {
  struct stat St {};
  ::stat(Path.c_str(), &St);
  return std::string(Name) + "=" + Path + ";size=" +
         std::to_string(St.st_size) + ";mtime=" + std::to_string(St.st_mtime);
}

Expected<ChildCompile> runCompilerChild(
    const std::string &Source, const char *Suffix, const char *What,
    const std::function<std::vector<std::string>(const std::string &,
                                                 const std::string &)> &Argv) {
  R3_TRY(checkRegularFile(Source));
  auto Output = TempFile::create(Suffix);
  if (!Output)
    return Output.takeError();
  auto Deps = TempFile::create(".d");
  if (!Deps)
    return Deps.takeError();
  std::vector<std::string> Words = Argv(Output->path(), Deps->path());
  ChildResult R;
  R3_TRY(moveInto(runCapturing(Words), R));
  if (!R.succeeded())
    return makeError("compiling '", Source, "' with ", Words[0], " failed (",
                     describeStatus(R.Status), "):\n",
                     trimmedDiagnostics(R.Output));
  ChildCompile Out;
  Out.Output = readWhole(Output->path());
  Out.Dependencies = dependenciesOf(Deps->path());
  Out.Printed = std::move(R.Output);
  if (Out.Output.empty())
    return makeError("compiling '", Source, "': ", Words[0], " wrote no ",
                     What);
  return Out;
}

std::string frontendIdentity(const CudaCompileOptions &O) {
  return toolIdentity("clang", hostClang()) + ";cuda=" + toolkitDir() +
         ";shim=" + shimDir() + ";argv=" + join(clangArgv(O, "", ""), "\n");
}

Expected<FrontendOutput> runFrontend(const CudaCompileOptions &O) {
  ChildCompile C;
  R3_TRY(moveInto(runCompilerChild(O.SourcePath, ".bc", "bitcode",
                                   [&O](const std::string &Out,
                                        const std::string &Deps) {
                                     return clangArgv(O, Out, Deps);
                                   }),
                  C));
  return FrontendOutput{std::move(C.Output), std::move(C.Dependencies)};
}

Expected<std::unique_ptr<Module>> parseBitcode(const std::string &Bytes,
                                               LLVMContext &Ctx,
                                               const std::string &What) {
  MemoryBufferRef Buffer(Bytes, What);
  auto M = parseBitcodeFile(Buffer, Ctx);
  if (!M)
    return makeError("reading ", What, ": ", toString(M.takeError()));
  return std::move(*M);
}

Expected<std::string> resolveKernel(const Module &M, const std::string &Given,
                                    const std::string &File) {
  return resolveKernelName(kernelsOf(M), Given, File);
}

Expected<std::string> resolveKernelName(const std::vector<std::string> &Kernels,
                                        const std::string &Given,
                                        const std::string &File) {
  uint32_t I = 0;
  R3_TRY(moveInto(
      lookupKernel(kernelNamesOf(Kernels), Given, File, "the source"), I));
  return Kernels[I];
}

Expected<std::unique_ptr<Module>> extractCuda(const Module &M,
                                              const std::string &Name) {
  auto X = extractDeviceKernel(M, Name);
  if (!X)
    return Error::make(toString(X.takeError()));
  return std::move(*X);
}

std::vector<std::string> parameterNames(const Module &M,
                                        const std::string &Kernel) {
  std::vector<std::string> Names;
  if (const Function *F = M.getFunction(Kernel))
    for (unsigned I = 0; I < F->arg_size(); ++I)
      Names.push_back(parameterName(*F, I));
  return Names;
}

} // namespace r3::cuda

namespace r3 {
std::vector<std::string> cudaSyntaxArgv(const std::string &Source,
                                        const std::vector<std::string> &Flags,
                                        int ComputeMajor, int ComputeMinor) {
  std::vector<std::string> Argv = cuda::deviceArgv(ComputeMajor, ComputeMinor);
  Argv.push_back(Source);
  Argv.insert(Argv.end(), Flags.begin(), Flags.end());
  return Argv;
}
} // namespace r3
