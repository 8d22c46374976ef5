// One list-mode run of an application, timed, its output kept (Profile.h).
#include "record/Profile.h"

#include "record/CaptureSink.h"
#include "record/RecordEnv.h"
#include "record/cuda/DriverProbe.h"
#include "support/StringUtil.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <thread>
#include <unistd.h>

namespace r3 {

namespace {
/// Copies what the application writes to r3's stderr as it comes, keeping
/// the last 64 KiB for an error message.
class OutputRelay {
public:
  Error start() {
    int P[2];
    if (::pipe2(P, O_CLOEXEC) != 0)
      return errnoError("cannot create a pipe for the application's output");
    Read = P[0];
    Write = P[1];
    Thread = std::thread([this] { relay(); });
    return Error::success();
  }
  int writeEnd() const { return Write; }
  /// Closes this side's write end (after the spawn).
  void closeWriteEnd() {
    if (Write >= 0)
      ::close(Write);
    Write = -1;
  }
  /// Waits for the application's end of the pipe to close.
  std::string finish() {
    closeWriteEnd();
    if (Thread.joinable())
      Thread.join();
    if (Read >= 0)
      ::close(Read);
    Read = -1;
    return Tail;
  }
  ~OutputRelay() { (void)finish(); }

private:
  void relay() {
    char Buf[4096];
    for (;;) {
      ssize_t N = ::read(Read, Buf, sizeof(Buf));
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        return;
      (void)!::write(2, Buf, size_t(N));
      Tail.append(Buf, size_t(N));
      if (Tail.size() > (128u << 10))
        Tail.erase(0, Tail.size() - (64u << 10));
    }
  }
  int Read = -1, Write = -1;
  std::thread Thread;
  std::string Tail;
};

std::vector<std::pair<std::string, std::string>>
environmentOf(const ProfileRequest &R, int StreamFd) {
  RecordEnv Env;
  Env.StreamFd = StreamFd;
  Env.Mode = RecordMode::List;
  Env.Patterns = R.Patterns;
  auto Extra = encodeRecordEnv(Env);
  if (R.Source == Backend::Cuda)
    Extra.emplace_back("CUDA_INJECTION64_PATH", R.Injection);
  return Extra;
}

/// The error of a run that ended badly, or whose list did not come whole.
Error runFailure(const ProfileRequest &R, const ExitStatus &S,
                 const Error &ListFailure, const std::string &Output) {
  std::string App = "'" + R.Argv.front() + "'";
  bool Failed = !S.succeeded();
  std::string Why;
  if (Failed)
    Why = App + " failed under r3 profile (" + describeExit(S) +
          "); nothing was written";
  else if (R.Source == Backend::Cuda &&
           ListFailure.message().starts_with(NothingSentMessage))
    Why = explainNothingSent(R.Argv.front(), "nothing was profiled");
  else
    Why = ListFailure.message();
  std::string Tail = lastLines(Output, 10);
  if (Failed && !Tail.empty())
    Why += "; its last lines of output:\n" + Tail;
  return Error::make(Why);
}
} // namespace

std::string explainNothingSent(const std::string &App,
                               const std::string &Written) {
  if (Error E = probeCudaDriver())
    return E.message() + "; " + Written;
  return "'" + App +
         "' ended without initializing CUDA, so the driver never loaded r3's "
         "injection library (does it launch kernels, with these arguments?); " +
         Written;
}

std::string lastLines(const std::string &Output, size_t Lines) {
  std::vector<std::string> All = split(trim(Output), '\n');
  if (All.size() == 1 && All[0].empty())
    return "";
  size_t From = All.size() > Lines ? All.size() - Lines : 0;
  std::string Out;
  for (size_t I = From; I < All.size(); ++I)
    Out += (I > From ? "\n  " : "  ") + All[I];
  return Out;
}

Expected<AppProfile> profileApplication(const ProfileRequest &R) {
  int Fds[2];
  R3_TRY(recordStreamPair(Fds));
  OutputRelay Output;
  if (Error E = Output.start()) {
    ::close(Fds[0]);
    ::close(Fds[1]);
    return E;
  }
  auto Start = std::chrono::steady_clock::now();
  auto Pid = spawnProgram(R.Program, R.Argv, environmentOf(R, Fds[1]),
                          Output.writeEnd(), Output.writeEnd());
  ::close(Fds[1]);
  Output.closeWriteEnd();
  if (!Pid) {
    ::close(Fds[0]);
    return Pid.takeError();
  }
  // Like system(): ^C and ^\ reach the application, which decides.
  auto OldInt = std::signal(SIGINT, SIG_IGN);
  auto OldQuit = std::signal(SIGQUIT, SIG_IGN);
  auto List = receiveKernelList(Fds[0]);
  ::close(Fds[0]); // a still-sending application now gets EPIPE, not a hang
  auto Status = waitForProgram(*Pid);
  double Wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  std::signal(SIGINT, OldInt);
  std::signal(SIGQUIT, OldQuit);
  std::string Tail = Output.finish();
  if (!Status)
    return Status.takeError();
  if (!List || !Status->succeeded())
    return runFailure(R, *Status, List ? Error::success() : List.takeError(),
                      Tail);
  AppProfile P;
  P.Kernels = std::move(*List);
  P.WallSeconds = Wall;
  if (P.Kernels.empty())
    return makeError("'", R.Argv.front(), "' launched no ",
                     R.Patterns.empty() ? "kernel" : "kernel matching --kernel",
                     R.Source == Backend::Host ? " that r3 instrumented" : "",
                     "; nothing to profile");
  return P;
}

} // namespace r3
