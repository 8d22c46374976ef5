// The third toolchain: nvcc, the compiler the application was built with,
// with the application's own flags (from compile_commands.json or the
// kernel's cflags) and the options the search varies (ptxas's -O level,
// --maxrregcount, --use_fast_math, and any nvcc options: -Xptxas
// -dlcm=cg, --extra-device-vectorization, ...). nvcc compiles the whole
// file to one cubin for the capture's architecture (-cubin: device code
// only; the file's host code is parsed, not compiled), so every source the
// application builds is a candidate, and compiler tuning starts from the
// application's own code generator, which clang's is often slower than.
// The kernel is then found among the cubin's entries by the same rule as
// the other toolchains', and ptxas's -v report gives its resources.
#include "compile/cuda/Stages.h"
#include "support/FileUtil.h"

#include "cubin/CubinSymbols.h"
#include "support/Process.h"
#include "support/StringUtil.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace r3::cuda {

namespace {
/// $R3_NVCC, else the toolkit's nvcc.
std::string nvccPath() {
  if (const char *Env = std::getenv("R3_NVCC"); Env && *Env)
    return Env;
  return toolkitDir() + "/bin/nvcc";
}

std::vector<std::string> nvccArgv(const CudaCompileOptions &O,
                                  const std::string &Out,
                                  const std::string &Deps) {
  std::vector<std::string> A = {
      nvccPath(), "-cubin",  "-arch=" + smName(O.ComputeMajor, O.ComputeMinor),
      "-o",       Out,       "-MD",
      "-MF",      Deps,      "-Xptxas",
      "-v",       "-Xptxas", "-O" + std::to_string(O.Settings.CodegenOpt)};
  if (O.Settings.MaxRegisters)
    A.push_back("--maxrregcount=" + std::to_string(O.Settings.MaxRegisters));
  if (O.Settings.FastMath)
    A.push_back("--use_fast_math");
  A.insert(A.end(), O.Settings.NvccOptions.begin(),
           O.Settings.NvccOptions.end());
  A.insert(A.end(), O.Flags.begin(), O.Flags.end());
  A.push_back(O.SourcePath);
  return A;
}

std::vector<uint8_t> readBytes(const std::string &Path) {
  auto Text = readWholeFile(Path, "cubin nvcc wrote");
  return Text ? std::vector<uint8_t>(Text->begin(), Text->end())
              : std::vector<uint8_t>();
}
} // namespace

Expected<NvccOutput> compileWithNvcc(const CudaCompileOptions &O) {
  auto Out = TempFile::create(".cubin");
  if (!Out)
    return Out.takeError();
  auto Deps = TempFile::create(".d");
  if (!Deps)
    return Deps.takeError();
  std::vector<std::string> Argv = nvccArgv(O, Out->path(), Deps->path());
  ChildResult R;
  R3_TRY(moveInto(runCapturing(Argv), R));
  if (!R.succeeded())
    return makeError("compiling '", O.SourcePath, "' with ", Argv[0],
                     " failed (", describeStatus(R.Status), "):\n",
                     trimmedDiagnostics(R.Output));
  NvccOutput N;
  N.Cubin = readBytes(Out->path());
  N.Log = trimmedLog(R.Output);
  N.Dependencies = dependenciesOf(Deps->path());
  if (N.Dependencies.empty())
    N.Dependencies = {O.SourcePath};
  CubinSymbols Symbols;
  R3_TRY(moveInto(readCubinSymbols(N.Cubin), Symbols));
  R3_TRY(moveInto(resolveKernelName(Symbols.Kernels, O.Kernel, O.SourcePath),
                  N.Kernel));
  return N;
}

std::string nvccIdentity() {
  std::string Path = nvccPath();
  struct stat St {};
  ::stat(Path.c_str(), &St);
  return "nvcc=" + Path + ";size=" + std::to_string(St.st_size) +
         ";mtime=" + std::to_string(St.st_mtime);
}

} // namespace r3::cuda
