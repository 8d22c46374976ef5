// A --source file for the host backend: clang-19 compiles it to LLVM IR
// without running LLVM's optimizations (-O2 -Xclang -disable-llvm-passes:
// clang's -O2 code generation and attributes, but no optnone, and the replay
// pipeline decides everything else), then the kernel is extracted with the
// same rule the pass plugin applied at build time (Extract.h), so that names
// and globals agree with the capture. Clang runs through posix_spawn with no
// shell, so that no flag or path is ever interpreted by one.
#include "compile/host/HostJit.h"

#include "compile/Extract.h"
#include "support/FileUtil.h"
#include "support/Process.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <unistd.h>

namespace r3 {

namespace {

Expected<const char *> languageOf(const std::string &Path) {
  size_t Dot = Path.rfind('.');
  size_t Slash = Path.rfind('/');
  std::string Ext =
      Dot == std::string::npos || (Slash != std::string::npos && Dot < Slash)
          ? ""
          : Path.substr(Dot);
  if (Ext == ".c")
    return "c";
  if (Ext == ".cc" || Ext == ".cpp" || Ext == ".cxx" || Ext == ".C")
    return "c++";
  return makeError("source file '", Path,
                   "': expected a C or C++ extension (.c, .cc, .cpp, .cxx, "
                   ".C), got ",
                   Ext.empty() ? std::string("none") : "'" + Ext + "'");
}

Error runClang(const std::string &Path, const char *Language,
               const std::vector<std::string> &Flags,
               const std::string &Output) {
  std::vector<std::string> Argv = {
      hostClang(), "-x",         Language,
      "-O2",       "-Xclang",    "-disable-llvm-passes",
      "-g0",       "-emit-llvm", "-c",
      "-o",        Output,       Path};
  Argv.insert(Argv.end(), Flags.begin(), Flags.end());
  ChildResult R;
  R3_TRY(moveInto(runCapturing(Argv), R));
  if (R.succeeded())
    return Error::success();
  return makeError("compiling '", Path, "' with ", Argv[0], " failed (",
                   describeStatus(R.Status), "):\n",
                   trimmedDiagnostics(R.Output));
}

Expected<std::vector<uint8_t>> extractFrom(const std::string &BitcodePath,
                                           const std::string &Source,
                                           const std::string &Kernel) {
  auto Buffer = llvm::MemoryBuffer::getFile(BitcodePath);
  if (!Buffer)
    return makeError("reading clang's output for '", Source,
                     "': ", Buffer.getError().message());
  llvm::LLVMContext Ctx;
  auto M = llvm::parseBitcodeFile((*Buffer)->getMemBufferRef(), Ctx);
  if (!M)
    return makeError("reading clang's output for '", Source,
                     "': ", llvm::toString(M.takeError()));
  auto K = extractKernel(**M, Kernel);
  if (!K)
    return makeError(Source, ": ", llvm::toString(K.takeError()));
  llvm::SmallVector<char, 0> Bytes;
  llvm::raw_svector_ostream OS(Bytes);
  llvm::WriteBitcodeToFile(*K->Module, OS);
  return std::vector<uint8_t>(Bytes.begin(), Bytes.end());
}

} // namespace

Expected<std::vector<uint8_t>>
compileHostSource(const std::string &Path, const std::string &Kernel,
                  const std::vector<std::string> &Flags) {
  const char *Language = nullptr;
  R3_TRY(moveInto(languageOf(Path), Language));
  R3_TRY(checkRegularFile(Path));
  auto Output = TempFile::create(".bc");
  if (!Output)
    return Output.takeError();
  R3_TRY(runClang(Path, Language, Flags, Output->path()));
  return extractFrom(Output->path(), Path, Kernel);
}

Expected<std::vector<std::string>>
hostSyntaxArgv(const std::string &Path, const std::vector<std::string> &Flags) {
  const char *Language = nullptr;
  R3_TRY(moveInto(languageOf(Path), Language));
  std::vector<std::string> Argv = {hostClang(), "-x", Language, Path};
  Argv.insert(Argv.end(), Flags.begin(), Flags.end());
  return Argv;
}

std::string hostClang() {
  if (const char *Env = std::getenv("R3_CLANG"); Env && *Env)
    return Env;
  std::string Built = std::string(R3_LLVM_BINDIR) + "/clang";
  if (::access(Built.c_str(), X_OK) == 0)
    return Built;
  return "clang-19";
}

} // namespace r3
