// A --source file for the host backend: clang-19 compiles it to LLVM IR
// without running LLVM's optimizations (-O2 -Xclang -disable-llvm-passes:
// clang's -O2 code generation and attributes, but no optnone, and the replay
// pipeline decides everything else), then the kernel is extracted with the
// same rule the pass plugin applied at build time (Extract.h), so that names
// and globals agree with the capture. Clang runs through posix_spawn with no
// shell, so that no flag or path is ever interpreted by one.
#include "compile/host/HostJit.h"

#include "compile/Extract.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace r3 {

namespace {

/// Diagnostics beyond this many bytes are cut: a runaway template error must
/// not flood a report or a prompt.
constexpr size_t MaxDiagnostics = 16 * 1024;

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

Error checkReadable(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return makeError("source file '", Path, "' does not exist");
  if (!S_ISREG(St.st_mode))
    return makeError("source file '", Path, "' is not a regular file");
  return Error::success();
}

/// A temporary file that is removed when this goes out of scope.
class TempFile {
public:
  static Expected<TempFile> create(const char *Suffix) {
    const char *Dir = std::getenv("TMPDIR");
    std::string Pattern =
        std::string(Dir && *Dir ? Dir : "/tmp") + "/r3-host-XXXXXX" + Suffix;
    int Fd = ::mkstemps(Pattern.data(), static_cast<int>(strlen(Suffix)));
    if (Fd < 0)
      return errnoError("creating a temporary file " + Pattern);
    ::close(Fd);
    return TempFile(std::move(Pattern));
  }
  TempFile(TempFile &&O) noexcept : Path(std::move(O.Path)) { O.Path.clear(); }
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  TempFile &operator=(TempFile &&) = delete;
  ~TempFile() {
    if (!Path.empty())
      ::unlink(Path.c_str());
  }
  const std::string &path() const { return Path; }

private:
  explicit TempFile(std::string P) : Path(std::move(P)) {}
  std::string Path;
};

struct ChildResult {
  int Status = 0;     ///< waitpid's status
  std::string Output; ///< stdout and stderr together
};

std::string readAll(int Fd) {
  std::string Out;
  char Buffer[4096];
  for (;;) {
    ssize_t N = ::read(Fd, Buffer, sizeof Buffer);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return Out;
    if (Out.size() < MaxDiagnostics)
      Out.append(Buffer, static_cast<size_t>(N));
  }
}

Expected<int> waitFor(pid_t Pid, const std::string &Program) {
  int Status = 0;
  while (::waitpid(Pid, &Status, 0) < 0)
    if (errno != EINTR)
      return errnoError("waiting for '" + Program + "'");
  return Status;
}

/// Runs Argv (Argv[0] looked up in PATH when it has no slash) and collects
/// what it writes to stdout and stderr.
Expected<ChildResult> runCapturing(const std::vector<std::string> &Argv) {
  int Pipe[2];
  if (::pipe2(Pipe, O_CLOEXEC) != 0)
    return errnoError("creating a pipe");
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  posix_spawn_file_actions_adddup2(&Actions, Pipe[1], 1);
  posix_spawn_file_actions_adddup2(&Actions, Pipe[1], 2);
  std::vector<char *> Args;
  for (const std::string &A : Argv)
    Args.push_back(const_cast<char *>(A.c_str()));
  Args.push_back(nullptr);
  pid_t Pid = 0;
  int Rc =
      ::posix_spawnp(&Pid, Args[0], &Actions, nullptr, Args.data(), environ);
  posix_spawn_file_actions_destroy(&Actions);
  ::close(Pipe[1]);
  if (Rc != 0) {
    ::close(Pipe[0]);
    return makeError("running '", Argv[0], "': ", std::strerror(Rc));
  }
  ChildResult R;
  R.Output = readAll(Pipe[0]);
  ::close(Pipe[0]);
  R3_TRY(moveInto(waitFor(Pid, Argv[0]), R.Status));
  return R;
}

std::string describeStatus(int Status) {
  if (WIFEXITED(Status))
    return "exit status " + std::to_string(WEXITSTATUS(Status));
  if (WIFSIGNALED(Status))
    return "killed by signal " + std::to_string(WTERMSIG(Status));
  return "status " + std::to_string(Status);
}

std::string trimmed(const std::string &S) {
  std::string T = llvm::StringRef(S).trim().str();
  if (S.size() >= MaxDiagnostics)
    T += "\n[diagnostics cut at " + std::to_string(MaxDiagnostics) + " bytes]";
  return T;
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
  if (WIFEXITED(R.Status) && WEXITSTATUS(R.Status) == 0)
    return Error::success();
  return makeError("compiling '", Path, "' with ", Argv[0], " failed (",
                   describeStatus(R.Status), "):\n", trimmed(R.Output));
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
  R3_TRY(checkReadable(Path));
  auto Output = TempFile::create(".bc");
  if (!Output)
    return Output.takeError();
  R3_TRY(runClang(Path, Language, Flags, Output->path()));
  return extractFrom(Output->path(), Path, Kernel);
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
