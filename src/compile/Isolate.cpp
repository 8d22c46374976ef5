// Compiles in a forked child (Isolate.h). The child writes one tag byte and
// its payload to a pipe: 'O' and the bytes, 'E' and an error message, or 'F'
// and LLVM's fatal-error message from the handler installed in the child.
// The parent reads to the end of the pipe against the deadline, then reaps
// the child.
#include "compile/Isolate.h"

#include "llvm/Support/ErrorHandling.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace r3 {

namespace {
int ChildFd = -1;
void (*FatalReport)(const char *) = nullptr;

void writeAll(int Fd, const void *Data, size_t N) {
  const char *P = static_cast<const char *>(Data);
  while (N > 0) {
    ssize_t W = ::write(Fd, P, N);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return;
    P += W;
    N -= static_cast<size_t>(W);
  }
}

void fatalHandler(void *, const char *Reason, bool) {
  std::string Message = std::string("LLVM ERROR: ") + Reason;
  if (FatalReport)
    FatalReport(Message.c_str());
  if (ChildFd >= 0) {
    writeAll(ChildFd, "F", 1);
    writeAll(ChildFd, Message.data(), Message.size());
  }
  ::_exit(70);
}

[[noreturn]] void child(int Fd,
                        const std::function<Expected<std::vector<uint8_t>>()> &Fn) {
  ChildFd = Fd;
  llvm::remove_fatal_error_handler();
  llvm::install_fatal_error_handler(fatalHandler, nullptr);
  auto R = Fn();
  if (R) {
    writeAll(Fd, "O", 1);
    writeAll(Fd, R->data(), R->size());
  } else {
    std::string M = R.takeError().message();
    writeAll(Fd, "E", 1);
    writeAll(Fd, M.data(), M.size());
  }
  ::_exit(0);
}

std::string signalText(int S) {
  const char *D = ::strsignal(S);
  return "signal " + std::to_string(S) + (D ? std::string(" (") + D + ")" : "");
}

/// Reads the child's output until it closes the pipe or the deadline.
bool readAll(int Fd, double TimeoutSeconds, std::vector<uint8_t> &Out) {
  auto Deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(TimeoutSeconds);
  uint8_t Buf[65536];
  for (;;) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    Deadline - std::chrono::steady_clock::now())
                    .count();
    if (Left <= 0)
      return false;
    pollfd P{Fd, POLLIN, 0};
    int N = ::poll(&P, 1, static_cast<int>(std::min<long long>(Left, 1 << 30)));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      continue;
    ssize_t R = ::read(Fd, Buf, sizeof Buf);
    if (R < 0 && errno == EINTR)
      continue;
    if (R <= 0)
      return true;
    Out.insert(Out.end(), Buf, Buf + R);
  }
}

Expected<std::vector<uint8_t>> outcome(std::vector<uint8_t> Out, int Status) {
  char Tag = Out.empty() ? 0 : static_cast<char>(Out[0]);
  std::string Text(Out.begin() + (Out.empty() ? 0 : 1), Out.end());
  if (Tag == 'O' && WIFEXITED(Status) && WEXITSTATUS(Status) == 0)
    return std::vector<uint8_t>(Out.begin() + 1, Out.end());
  if (Tag == 'E' || Tag == 'F')
    return Error::make(Text);
  if (WIFSIGNALED(Status))
    return makeError("the compiler crashed: ", signalText(WTERMSIG(Status)));
  return makeError("the compiler exited with status ",
                   WIFEXITED(Status) ? WEXITSTATUS(Status) : -1,
                   " without a result");
}
} // namespace

Expected<std::vector<uint8_t>>
runIsolated(const std::function<Expected<std::vector<uint8_t>>()> &Fn,
            double TimeoutSeconds) {
  int P[2];
  if (::pipe2(P, O_CLOEXEC) != 0)
    return errnoError("compile: pipe");
  pid_t Pid = ::fork();
  if (Pid < 0) {
    ::close(P[0]);
    ::close(P[1]);
    return errnoError("compile: fork");
  }
  if (Pid == 0) {
    ::close(P[0]);
    child(P[1], Fn);
  }
  ::close(P[1]);
  std::vector<uint8_t> Out;
  bool Done = readAll(P[0], TimeoutSeconds, Out);
  ::close(P[0]);
  if (!Done)
    ::kill(Pid, SIGKILL);
  int Status = 0;
  while (::waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  if (!Done)
    return makeError("compiling took longer than ", TimeoutSeconds,
                     " s and was stopped");
  return outcome(std::move(Out), Status);
}

void onLlvmFatalError(void (*Report)(const char *Message)) {
  FatalReport = Report;
  llvm::remove_fatal_error_handler();
  llvm::install_fatal_error_handler(fatalHandler, nullptr);
}

} // namespace r3
