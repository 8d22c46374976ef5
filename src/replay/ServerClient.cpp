// The replay client: a server child per capture, spawned (never forked from a
// process that may hold LLVM or CUDA state), restarted lazily after a
// candidate kills it. Deadlines are enforced here with poll(), so a candidate
// that loops forever costs its budget and no more.
#include "replay/ServerClient.h"

#include "support/FileUtil.h"

#include "support/Process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>


namespace r3 {

namespace {
ServerClock::time_point after(double Seconds) {
  return ServerClock::now() + std::chrono::duration_cast<ServerClock::duration>(
                                  std::chrono::duration<double>(Seconds));
}

std::string seconds(double S) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%g s", S);
  return Buf;
}

/// Waits for Pid to end and returns its wait status.
int reap(pid_t Pid) {
  int Status = 0;
  while (::waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  return Status;
}

void closeFd(int &Fd) {
  if (Fd >= 0)
    ::close(Fd);
  Fd = -1;
}
} // namespace

std::string signalName(int Signal) {
  if (const char *Abbrev = ::sigabbrev_np(Signal))
    return std::string("SIG") + Abbrev;
  return "signal " + std::to_string(Signal);
}

double runBudgetSeconds(const Candidate &C) {
  double Runs =
      (1.0 + C.Warmup + C.Repetitions) * std::max<size_t>(C.Launches.size(), 1);
  return Runs * C.TimeoutSeconds;
}

Expected<std::unique_ptr<ServerClient>>
ServerClient::create(ServerOptions Options) {
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<ServerClient> C(new ServerClient(std::move(Options)));
  if (C->Options.ScratchDir.empty()) {
    R3_TRY(moveInto(makeTemporaryFolder("r3-replay"), C->OwnScratch));
    C->Options.ScratchDir = C->OwnScratch;
  }
  R3_TRY(C->start());
  return C;
}

ServerClient::~ServerClient() {
  stop();
  if (!OwnScratch.empty()) {
    std::error_code EC;
    std::filesystem::remove_all(OwnScratch, EC);
  }
}

void ServerClient::stop() {
  closeFd(ToServer);
  closeFd(FromServer);
  if (Pid > 0) {
    // With its input closed a healthy server exits by itself; one that is
    // busy or hung does not, and is not worth waiting for.
    ::kill(Pid, SIGKILL);
    reap(Pid);
  }
  Pid = -1;
}

Error ServerClient::start() {
  std::vector<std::string> Words = Options.Command;
  if (Words.empty())
    Words = {"/proc/self/exe", "__replay-server"};
  Words.push_back("@IN@");
  Words.push_back("@OUT@");
  PipedChildOptions O;
  O.StdoutToStderr = true; // what a candidate prints must not mix with r3's
  auto C = spawnPiped(Words, O);
  if (!C)
    return makeError("replay server: ", C.error().message());
  Pid = C->Pid;
  ToServer = C->ToChild;
  FromServer = C->FromChild;
  ++Starts;
  OpenMsg Open{Options.CapturePath, Options.ScratchDir,
               Options.AddressSpaceBytes,
               Options.OpenTimeoutSeconds + Options.CompileTimeoutSeconds};
  if (Error E = sendFrame(ToServer, ServerFrame::Open, encode(Open))) {
    stop();
    return E;
  }
  ServerFrameData F;
  auto S = readFrame(FromServer, after(Options.OpenTimeoutSeconds), F);
  if (S && *S == ReadStatus::Frame && F.Kind == ServerFrame::Opened) {
    auto O = decodeOpened(F.Meta);
    if (!O) {
      stop();
      return O.takeError();
    }
    Opened = *O;
    return Error::success();
  }
  Error Why = Error::make("replay server: no answer to open");
  if (!S)
    Why = S.takeError();
  else if (*S == ReadStatus::TimedOut)
    Why = makeError("replay server: opening the capture took longer than ",
                    seconds(Options.OpenTimeoutSeconds));
  else if (*S == ReadStatus::Frame && F.Kind == ServerFrame::Error) {
    auto M = decodeError(F.Meta);
    Why = M ? Error::make(*M) : M.takeError();
  } else if (*S == ReadStatus::End) {
    closeFd(ToServer);
    int Status = reap(Pid);
    Pid = -1;
    Why =
        WIFSIGNALED(Status)
            ? makeError("replay server: died of ", signalName(WTERMSIG(Status)),
                        " before opening the capture")
            : makeError("replay server: exited with status ",
                        WEXITSTATUS(Status), " before opening the capture");
  }
  stop();
  return Why;
}

CandidateResult ServerClient::deathResult(FailureKind IfKilled,
                                          const CompiledInfo &Info,
                                          const std::string &Phase) {
  bool KilledByUs = IfKilled == FailureKind::Timeout;
  if (KilledByUs)
    ::kill(Pid, SIGKILL);
  closeFd(ToServer);
  closeFd(FromServer);
  int Status = reap(Pid);
  Pid = -1;
  CandidateResult R;
  R.CompileMs = Info.CompileMs;
  R.Pipeline = Info.Pipeline;
  R.CodegenOpt = Info.CodegenOpt;
  R.Poisoned = Info.Poisoned;
  R.Sandbox = Opened.Sandbox;
  if (KilledByUs) {
    R.Failure = FailureKind::Timeout;
    R.Message = "timeout: " + Phase;
  } else if (WIFSIGNALED(Status) && WTERMSIG(Status) == SIGXCPU) {
    R.Failure = FailureKind::Timeout;
    R.Message = "timeout: the server ran out of its CPU time limit " + Phase;
  } else if (WIFSIGNALED(Status)) {
    R.Failure = FailureKind::Crashed;
    R.Message = "crashed: " + signalName(WTERMSIG(Status)) + " " + Phase;
  } else {
    R.Failure = FailureKind::Crashed;
    R.Message = "crashed: the replay server exited with status " +
                std::to_string(WEXITSTATUS(Status)) + " " + Phase;
  }
  return R;
}

Expected<CandidateResult> ServerClient::awaitResult(const Candidate &C) {
  auto Deadline = after(Options.CompileTimeoutSeconds);
  std::string Phase = "while compiling the candidate";
  std::string Late =
      "compiling took longer than " + seconds(Options.CompileTimeoutSeconds);
  CompiledInfo Info;
  for (;;) {
    ServerFrameData F;
    auto S = readFrame(FromServer, Deadline, F);
    if (!S) {
      stop();
      return S.takeError();
    }
    if (*S == ReadStatus::TimedOut)
      return deathResult(FailureKind::Timeout, Info, Late);
    if (*S == ReadStatus::End)
      return deathResult(FailureKind::Crashed, Info, Phase);
    if (F.Kind == ServerFrame::Result) {
      auto R = decodeResult(F.Meta);
      // The server exits after such a result: reap it now, so that the next
      // candidate starts a fresh one instead of meeting a dying server.
      if (R && R->DeviceLost)
        stop();
      return R;
    }
    if (F.Kind == ServerFrame::Error) {
      auto M = decodeError(F.Meta);
      return M ? Error::make(*M) : M.takeError();
    }
    if (F.Kind == ServerFrame::Tick) {
      Deadline = after(C.TimeoutSeconds + Options.RunSlackSeconds);
      continue;
    }
    if (F.Kind != ServerFrame::Running) {
      stop();
      return makeError("replay server protocol: unexpected ",
                       serverFrameName(F.Kind), " frame during an evaluation");
    }
    auto Running = decodeRunning(F.Meta);
    if (!Running)
      return Running.takeError();
    Info = *Running;
    // Each run starts with a Tick, which gives it the per-run timeout.
    Deadline = after(C.TimeoutSeconds + Options.RunSlackSeconds);
    Phase = "while running the candidate";
    Late = "a run took longer than " + seconds(C.TimeoutSeconds) +
           " (the per-run timeout) and was killed";
  }
}

Expected<CandidateResult> ServerClient::evaluate(const Candidate &C) {
  if (Pid < 0)
    R3_TRY(start());
  auto Meta = encodeCandidate(C);
  if (sendFrame(ToServer, ServerFrame::Evaluate, Meta, C.Image)) {
    // The server died while idle, not of this candidate: start another.
    stop();
    R3_TRY(start());
    R3_TRY(sendFrame(ToServer, ServerFrame::Evaluate, Meta, C.Image));
  }
  return awaitResult(C);
}

uint64_t defaultAddressSpaceLimit(const CaptureReader &R) {
  uint64_t Largest = 0;
  for (const LaunchInfo &L : R.launches())
    Largest = std::max(Largest, totalRegionBytes(L));
  return (8ull << 30) + 4 * Largest;
}

} // namespace r3
