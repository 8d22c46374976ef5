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

} // namespace

Expected<NvccOutput> compileWithNvcc(const CudaCompileOptions &O) {
  ChildCompile C;
  R3_TRY(moveInto(runCompilerChild(O.SourcePath, ".cubin", "cubin",
                                   [&O](const std::string &Out,
                                        const std::string &Deps) {
                                     return nvccArgv(O, Out, Deps);
                                   }),
                  C));
  NvccOutput N;
  N.Cubin.assign(C.Output.begin(), C.Output.end());
  N.Log = trimmedLog(C.Printed);
  N.Dependencies = std::move(C.Dependencies);
  if (N.Dependencies.empty())
    N.Dependencies = {O.SourcePath};
  CubinSymbols Symbols;
  R3_TRY(moveInto(readCubinSymbols(N.Cubin), Symbols));
  R3_TRY(moveInto(resolveKernelName(Symbols.Kernels, O.Kernel, O.SourcePath),
                  N.Kernel));
  return N;
}

std::string nvccIdentity() { return toolIdentity("nvcc", nvccPath()); }

} // namespace r3::cuda
