// Child processes and temporary files (see Process.h).
#include "support/Process.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace r3 {

namespace {

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

} // namespace

bool ChildResult::succeeded() const {
  return WIFEXITED(Status) && WEXITSTATUS(Status) == 0;
}

Expected<ChildResult> runCapturing(const std::vector<std::string> &Argv,
                                   const std::string &StdoutFile) {
  int Pipe[2];
  if (::pipe2(Pipe, O_CLOEXEC) != 0)
    return errnoError("creating a pipe");
  posix_spawn_file_actions_t Actions;
  posix_spawn_file_actions_init(&Actions);
  if (StdoutFile.empty())
    posix_spawn_file_actions_adddup2(&Actions, Pipe[1], 1);
  else
    posix_spawn_file_actions_addopen(&Actions, 1, StdoutFile.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
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

std::string trimmedDiagnostics(const std::string &Output) {
  size_t First = Output.find_first_not_of(" \t\r\n");
  size_t Last = Output.find_last_not_of(" \t\r\n");
  std::string T =
      First == std::string::npos ? "" : Output.substr(First, Last - First + 1);
  if (Output.size() >= MaxDiagnostics)
    T += "\n[diagnostics cut at " + std::to_string(MaxDiagnostics) + " bytes]";
  return T;
}

Expected<TempFile> TempFile::create(const char *Suffix) {
  const char *Dir = std::getenv("TMPDIR");
  std::string Pattern =
      std::string(Dir && *Dir ? Dir : "/tmp") + "/r3-XXXXXX" + Suffix;
  int Fd = ::mkstemps(Pattern.data(), static_cast<int>(strlen(Suffix)));
  if (Fd < 0)
    return errnoError("creating a temporary file " + Pattern);
  ::close(Fd);
  return TempFile(std::move(Pattern));
}

TempFile::~TempFile() {
  if (!Path.empty())
    ::unlink(Path.c_str());
}

Expected<PipedChild> spawnPiped(std::vector<std::string> Argv,
                                const PipedChildOptions &O) {
  int In[2], Out[2];
  if (::pipe2(In, O_CLOEXEC) != 0)
    return errnoError("pipe");
  if (::pipe2(Out, O_CLOEXEC) != 0) {
    ::close(In[0]);
    ::close(In[1]);
    return errnoError("pipe");
  }
  // The child's ends, renumbered above every descriptor involved so that
  // the two dup2 actions cannot overwrite each other; dup2 clears
  // close-on-exec.
  int ChildIn = std::max({In[0], In[1], Out[0], Out[1]}) + 1;
  int ChildOut = ChildIn + 1;
  for (std::string &W : Argv)
    if (W == "@IN@" || W == "@OUT@")
      W = std::to_string(W == "@IN@" ? ChildIn : ChildOut);
  posix_spawn_file_actions_t A;
  posix_spawn_file_actions_init(&A);
  posix_spawn_file_actions_adddup2(&A, In[0], ChildIn);
  posix_spawn_file_actions_adddup2(&A, Out[1], ChildOut);
  if (O.StdoutToStderr)
    posix_spawn_file_actions_adddup2(&A, STDERR_FILENO, STDOUT_FILENO);
  posix_spawnattr_t Attr;
  posix_spawnattr_init(&Attr);
  if (O.OwnProcessGroup) {
    posix_spawnattr_setflags(&Attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&Attr, 0);
  }
  std::vector<char *> Args, Env;
  for (std::string &W : Argv)
    Args.push_back(W.data());
  Args.push_back(nullptr);
  std::vector<std::string> EnvCopy;
  if (O.Environment) {
    EnvCopy = *O.Environment;
    for (std::string &E : EnvCopy)
      Env.push_back(E.data());
    Env.push_back(nullptr);
  }
  PipedChild C;
  pid_t Pid = -1;
  int Rc = ::posix_spawn(&Pid, Args[0], &A, &Attr, Args.data(),
                         O.Environment ? Env.data() : environ);
  posix_spawn_file_actions_destroy(&A);
  posix_spawnattr_destroy(&Attr);
  ::close(In[0]);
  ::close(Out[1]);
  if (Rc != 0) {
    ::close(In[1]);
    ::close(Out[0]);
    return makeError("cannot start ", Argv[0], ": ", std::strerror(Rc));
  }
  C.Pid = Pid;
  C.ToChild = In[1];
  C.FromChild = Out[0];
  return C;
}

} // namespace r3

