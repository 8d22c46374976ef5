// Spawning and waiting for the recorded application.
#include "record/Launcher.h"

#include "record/Protocol.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace r3 {

namespace {
/// Why Path cannot be executed, or success.
Error checkExecutable(const std::string &Path, const std::string &Name) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return makeError("cannot run '", Name, "': ", std::strerror(errno));
  if (S_ISDIR(St.st_mode))
    return makeError("cannot run '", Name, "': it is a directory");
  if (::access(Path.c_str(), X_OK) != 0)
    return makeError("cannot run '", Name,
                     "': it is not executable (permission denied)");
  return Error::success();
}

std::vector<std::string>
environmentWith(const std::vector<std::pair<std::string, std::string>> &Extra) {
  std::vector<std::string> Env;
  for (char **E = environ; E && *E; ++E) {
    std::string Entry = *E;
    bool Replaced = false;
    for (const auto &[Name, Value] : Extra)
      Replaced |= Entry.compare(0, Name.size() + 1, Name + "=") == 0;
    if (!Replaced)
      Env.push_back(std::move(Entry));
  }
  for (const auto &[Name, Value] : Extra)
    Env.push_back(Name + "=" + Value);
  return Env;
}

std::vector<char *> pointers(std::vector<std::string> &Strings) {
  std::vector<char *> P;
  for (std::string &S : Strings)
    P.push_back(S.data());
  P.push_back(nullptr);
  return P;
}
} // namespace

Expected<std::string> resolveProgram(const std::string &Name) {
  if (Name.empty())
    return Error::make("the application's name is empty");
  if (Name.find('/') != std::string::npos) {
    R3_TRY(checkExecutable(Name, Name));
    return Name;
  }
  const char *Path = std::getenv("PATH");
  std::string Dirs = Path ? Path : "/usr/local/bin:/usr/bin:/bin";
  bool FoundNonExecutable = false;
  for (size_t Pos = 0; Pos <= Dirs.size();) {
    size_t End = std::min(Dirs.find(':', Pos), Dirs.size());
    std::string Dir = Dirs.substr(Pos, End - Pos);
    std::string Candidate = (Dir.empty() ? "." : Dir) + "/" + Name;
    struct stat St;
    if (::stat(Candidate.c_str(), &St) == 0 && S_ISREG(St.st_mode)) {
      if (::access(Candidate.c_str(), X_OK) == 0)
        return Candidate;
      FoundNonExecutable = true;
    }
    Pos = End + 1;
  }
  if (FoundNonExecutable)
    return makeError("cannot run '", Name,
                     "': found in PATH, but it is not executable");
  return makeError("cannot run '", Name,
                   "': command not found in PATH (give a path such as ./", Name,
                   " for a program in this directory)");
}

Expected<pid_t>
spawnProgram(const std::string &Path, const std::vector<std::string> &Argv,
             const std::vector<std::pair<std::string, std::string>> &Extra,
             int OutFd, int ErrFd) {
  std::vector<std::string> Args = Argv, Env = environmentWith(Extra);
  std::vector<char *> ArgP = pointers(Args), EnvP = pointers(Env);
  posix_spawn_file_actions_t Actions;
  ::posix_spawn_file_actions_init(&Actions);
  if (OutFd >= 0)
    ::posix_spawn_file_actions_adddup2(&Actions, OutFd, 1);
  if (ErrFd >= 0)
    ::posix_spawn_file_actions_adddup2(&Actions, ErrFd, 2);
  pid_t Pid = 0;
  int Err = ::posix_spawn(&Pid, Path.c_str(), &Actions, nullptr, ArgP.data(),
                          EnvP.data());
  ::posix_spawn_file_actions_destroy(&Actions);
  if (Err != 0)
    return makeError("cannot run '", Argv.empty() ? Path : Argv[0],
                     "': ", std::strerror(Err));
  return Pid;
}

Error recordStreamPair(int Fds[2]) {
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, Fds) != 0)
    return errnoError("cannot create the record stream (socketpair)");
  for (int I = 0; I < 2; ++I)
    wire::enlargeSocketBuffers(Fds[I]);
  int Flags = ::fcntl(Fds[1], F_GETFD);
  ::fcntl(Fds[1], F_SETFD, Flags & ~FD_CLOEXEC);
  return Error::success();
}

Expected<ExitStatus> waitForProgram(pid_t Pid) {
  int Status = 0;
  while (::waitpid(Pid, &Status, 0) < 0)
    if (errno != EINTR)
      return errnoError("waiting for the application");
  if (WIFSIGNALED(Status))
    return ExitStatus{ExitStatus::Kind::Signaled, WTERMSIG(Status)};
  return ExitStatus{ExitStatus::Kind::Exited, WEXITSTATUS(Status)};
}

std::string describeExit(const ExitStatus &S) {
  if (S.How == ExitStatus::Kind::Exited)
    return "exit code " + std::to_string(S.Code);
  const char *Name = ::strsignal(S.Code);
  return "signal " + std::to_string(S.Code) + " (" + (Name ? Name : "unknown") +
         ")";
}

} // namespace r3
