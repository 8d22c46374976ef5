// The coordinator's loop (see EventLoop.h): keeps every worker's queue full,
// commits results as they arrive (one transaction per batch), restarts a
// worker that dies and gives its jobs to the others, and stops cleanly when
// asked: no new work, a grace period for what is in flight, a commit. The
// workers are reached through links (Transport.h): processes on this node
// over pipes, or the ranks of an MPI job.
#include "campaign/EventLoop.h"


#include "campaign/SearchState.h"
#include "campaign/Transport.h"
#include "campaign/Worker.h"
#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "replay/LaunchRule.h"
#include "support/FileUtil.h"
#include "support/Machine.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <poll.h>
#include <unistd.h>

namespace r3 {

namespace {
volatile sig_atomic_t StopRequested = 0;
int StopPipe[2] = {-1, -1};

using Clock = std::chrono::steady_clock;

struct WorkerSlot {
  std::unique_ptr<WorkerLink> Link;
  std::string Gpu;    ///< cuda: its CUDA_VISIBLE_DEVICES
  std::string Device; ///< what its servers run on, as they report it
  std::map<uint64_t, InFlight> Jobs;
  unsigned Restarts = 0;
  bool Alive = false;
};

constexpr unsigned MaxRestarts = 5;

class Loop {
public:
  Loop(const Campaign &C, const TuneOptions &O, TuneObserver &Obs, History &H,
       unsigned N, const std::vector<std::string> &Gpus)
      : C(C), O(O), Obs(Obs), H(H), Co(C, H, N), Slots(N) {
    for (unsigned W = 0; W < N && !Gpus.empty(); ++W)
      Slots[W].Gpu = Gpus[W % Gpus.size()];
    // A GPU worker compiles several queued candidates at once and keeps
    // as many queued plus the one running (compileThreads of its share of
    // the cores); a host worker has a core of its own and one compile.
    if (C.Target == Backend::Cuda)
      Compilers = compileThreads(usableCores() / std::max(1u, N));
    Depth = std::max(std::max(1u, O.QueueDepth), Compilers + 1);
  }
  Expected<TuneSummary> run();

private:
  Error startWorker(unsigned W);
  Error fill(bool &Dispatched);
  /// Waits up to TimeoutMs for a worker to say something: the workers to
  /// read from (those whose descriptor is ready, and every link without
  /// one, which is asked each turn).
  std::vector<unsigned> wait(int TimeoutMs);
  /// Reads what each of Ready sent, inside the caller's transaction.
  Error receiveFrom(const std::vector<unsigned> &Ready);
  Error receive(unsigned W);
  Error handle(unsigned W, WorkerMessage &Msg);
  Error workerDied(unsigned W, const std::string &Why);
  size_t inFlight() const;
  void report(bool Force);
  Error backup(bool Now);
  void finish(TuneSummary &S, TuneOutcome Outcome, std::string Why);

  const Campaign &C;
  const TuneOptions &O;
  TuneObserver &Obs;
  History &H;
  SearchState Co;
  std::vector<WorkerSlot> Slots;
  Clock::time_point LastReport;
  unsigned Compilers = 1; ///< compile threads per worker
  unsigned Depth = 2;     ///< jobs queued per worker

public:
  std::string BackupTo;   ///< where a node-local history is copied
  Clock::time_point LastBackup = Clock::now();
};

Error Loop::startWorker(unsigned W) {
  WorkerSlot &S = Slots[W];
  if (O.Links) {
    R3_TRY(moveInto(O.Links(W), S.Link));
  } else {
    auto P = WorkerProcess::spawn(W, S.Gpu, Compilers);
    if (!P)
      return P.takeError();
    S.Link = pipeLink(std::move(*P));
  }
  S.Alive = true;
  return Error::success();
}

size_t Loop::inFlight() const {
  size_t N = 0;
  for (const WorkerSlot &S : Slots)
    N += S.Jobs.size();
  return N;
}

Error Loop::fill(bool &Dispatched) {
  R3_TRY(Co.pumpLlm());
  unsigned Idle = 0;
  for (const WorkerSlot &S : Slots)
    Idle += S.Alive && S.Jobs.size() < Depth ? Depth - S.Jobs.size() : 0;
  Co.beginRound(O.BatchProposals ? Idle : 1);
  for (unsigned W = 0; W < Slots.size(); ++W) {
    WorkerSlot &S = Slots[W];
    while (S.Alive && S.Jobs.size() < Depth) {
      std::optional<InFlight> F;
      R3_TRY(moveInto(Co.next(W), F));
      if (!F)
        return Error::success();
      Dispatched = true;
      uint64_t Id = F->JobId;
      Error E = S.Link->send(encodeJob(F->Job));
      S.Jobs.emplace(Id, std::move(*F));
      if (E)
        R3_TRY(workerDied(W, E.message()));
    }
  }
  return Error::success();
}

Error Loop::workerDied(unsigned W, const std::string &Why) {
  WorkerSlot &S = Slots[W];
  S.Alive = false;
  for (auto &[Id, F] : S.Jobs)
    Co.giveBack(F);
  S.Jobs.clear();
  bool Restart = S.Link && S.Link->restartable();
  S.Link.reset();
  if (!Restart || ++S.Restarts > MaxRestarts) {
    Obs.note("worker " + std::to_string(W) + " died (" + Why + ")" +
             (Restart ? " too often" : "") + "; continuing without it");
    bool Any = std::any_of(Slots.begin(), Slots.end(),
                           [](const WorkerSlot &X) { return X.Alive; });
    if (!Any)
      return makeError("every worker died; the last: ", Why);
    return Error::success();
  }
  Obs.note("worker " + std::to_string(W) + " died (" + Why +
           "); restarting it");
  return startWorker(W);
}

/// Every message worker W has waiting.
Error Loop::receive(unsigned W) {
  while (Slots[W].Alive) {
    WorkerMessage Msg;
    auto Got = Slots[W].Link->receive(Msg);
    if (!Got)
      return workerDied(W, Got.error().message());
    if (*Got == WorkerLink::Got::Closed)
      return workerDied(W, "it exited");
    if (*Got == WorkerLink::Got::Nothing)
      return Error::success();
    R3_TRY(handle(W, Msg));
    if (Slots[W].Link && Slots[W].Link->pollFd() >= 0)
      return Error::success(); // a pipe: poll() says when there is more
  }
  return Error::success();
}

Error Loop::handle(unsigned W, WorkerMessage &Msg) {
  WorkerSlot &S = Slots[W];
  switch (Msg.Kind) {
  case WorkerMessageKind::Hello:
    if (C.Target == Backend::Host)
      S.Device = Msg.Hello.Device;
    return Error::success();
  case WorkerMessageKind::Lost: {
    // A rank's worker process died and the rank started another: the jobs
    // it held are given to whoever has room.
    for (auto &[Id, F] : S.Jobs)
      Co.giveBack(F);
    S.Jobs.clear();
    Obs.note("worker " + std::to_string(W) + ": " + Msg.Text);
    return Error::success();
  }
  case WorkerMessageKind::Stop:
    Obs.note("worker " + std::to_string(W) + " asks to stop: " + Msg.Text);
    requestCampaignStop();
    return Error::success();
  case WorkerMessageKind::Result:
    break;
  default:
    return Error::success();
  }
  if (!Msg.Result.Device.empty())
    S.Device = Msg.Result.Device; // the GPU its server opened
  auto It = S.Jobs.find(Msg.Result.Id);
  if (It == S.Jobs.end())
    return Error::success(); // a result of a job given back already
  Error E = Co.apply(It->second, Msg.Result, W, S.Device);
  S.Jobs.erase(It);
  return E;
}

std::vector<unsigned> Loop::wait(int TimeoutMs) {
  std::vector<pollfd> Fds;
  std::vector<unsigned> Owners, Ready;
  Fds.push_back({StopPipe[0], POLLIN, 0});
  for (unsigned W = 0; W < Slots.size(); ++W) {
    if (!Slots[W].Alive)
      continue;
    int Fd = Slots[W].Link->pollFd();
    if (Fd >= 0) {
      Fds.push_back({Fd, POLLIN, 0});
      Owners.push_back(W);
    } else {
      Ready.push_back(W);
    }
  }
  // Links without a descriptor are asked on every turn: wait briefly.
  int N = ::poll(Fds.data(), Fds.size(),
                 Ready.empty() ? TimeoutMs : std::min(TimeoutMs, 1));
  if (N < 0)
    return Ready;
  if (Fds[0].revents) {
    char Buf[64];
    while (::read(StopPipe[0], Buf, sizeof Buf) > 0) {
    }
  }
  for (size_t I = 1; I < Fds.size(); ++I)
    if (Fds[I].revents & (POLLIN | POLLHUP | POLLERR))
      Ready.push_back(Owners[I - 1]);
  return Ready;
}

Error Loop::receiveFrom(const std::vector<unsigned> &Ready) {
  for (unsigned W : Ready)
    if (Slots[W].Alive)
      R3_TRY(receive(W));
  return Error::success();
}

void Loop::report(bool Force) {
  for (const std::string &N : Co.takeNotes())
    Obs.note(N);
  auto Now = Clock::now();
  if (!Force && Now - LastReport < std::chrono::milliseconds(500))
    return;
  LastReport = Now;
  TuneProgress P = Co.progress();
  P.InFlight = inFlight();
  Obs.progress(P);
}

void Loop::finish(TuneSummary &S, TuneOutcome Outcome, std::string Why) {
  S.Outcome = Outcome;
  S.Why = std::move(Why);
  for (WorkerSlot &W : Slots)
    if (W.Link)
      W.Link->shutdown(Outcome == TuneOutcome::Interrupted ? 0.5 : 5);
}

Expected<TuneSummary> Loop::run() {
  TuneSummary S;
  R3_TRY(H.begin());
  auto Resumed = Co.load();
  if (!Resumed) {
    (void)H.rollback();
    return Resumed.takeError();
  }
  R3_TRY(H.commit());
  // Under Slurm, which job and which of its runs this segment is (r3 slurm
  // status lists them; a requeued job counts its restarts).
  if (const char *Job = std::getenv("SLURM_JOB_ID")) {
    auto Env = [](const char *Name) {
      const char *V = std::getenv(Name);
      return std::string(V ? V : "");
    };
    std::string What = std::string("job ") + Job + ", restart " +
                       (Env("SLURM_RESTART_COUNT").empty()
                            ? std::string("0")
                            : Env("SLURM_RESTART_COUNT"));
    if (!Env("SLURM_ARRAY_TASK_ID").empty())
      What += ", array task " + Env("SLURM_ARRAY_TASK_ID");
    if (!Env("R3_SLURM_SEGMENT").empty())
      What += ", segment " + Env("R3_SLURM_SEGMENT");
    R3_TRY(H.addEvent("slurm_segment", What));
  }
  S.Resumed = *Resumed;
  if (S.Resumed)
    Obs.note("resuming " + H.path() + ": " + std::to_string(Co.committed()) +
             " evaluations committed");
  for (unsigned W = 0; W < Slots.size(); ++W)
    R3_TRY(startWorker(W));
  auto Start = Clock::now();
  std::optional<Clock::time_point> StopBy;
  std::string StopWhy;
  // Each turn reads what the workers sent and dispatches what the freed
  // slots can take in one transaction, so a turn costs one synchronous
  // commit, then waits for the workers outside any transaction.
  std::vector<unsigned> Ready;
  while (true) {
    bool WallOver =
        C.Budget.WallSeconds > 0 &&
        std::chrono::duration<double>(Clock::now() - Start).count() >
            C.Budget.WallSeconds;
    if (!StopBy && (StopRequested || WallOver)) {
      StopWhy = StopRequested ? "" : "the wall-time budget is spent";
      double Grace = StopRequested ? O.GraceSeconds : 1e9;
      StopBy = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(Grace));
      if (inFlight())
        Obs.note("stopping: waiting for " + std::to_string(inFlight()) +
                 " evaluation(s) in flight");
    }
    bool Dispatched = false;
    R3_TRY(H.begin());
    Error E = receiveFrom(Ready);
    if (!E && !StopBy)
      E = fill(Dispatched);
    if (E) {
      (void)H.rollback();
      return E;
    }
    R3_TRY(H.commit());
    if (!StopBy) {
      if (auto Why = Co.finished(inFlight())) {
        finish(S, TuneOutcome::Complete, *Why);
        break;
      }
      if (!Dispatched && inFlight() == 0 && !Co.waiting()) {
        finish(S, TuneOutcome::Complete, "the search space is exhausted");
        break;
      }
    } else if (inFlight() == 0 || Clock::now() > *StopBy) {
      finish(S,
             StopWhy.empty() ? TuneOutcome::Interrupted : TuneOutcome::Complete,
             StopWhy.empty() ? "stopped by a signal" : StopWhy);
      break;
    }
    // Waiting on LLM calls alone: look again soon for their children.
    Ready = wait(inFlight() == 0 && Co.waiting() ? 20 : 200);
    report(false);
    R3_TRY(backup(false));
  }
  R3_TRY(H.begin());
  if (Error E = Co.closeLlm()) {
    (void)H.rollback();
    return E;
  }
  R3_TRY(H.commit());
  report(true);
  S.Final = Co.progress();
  R3_TRY(H.setCampaignState(
      S.Outcome == TuneOutcome::Interrupted ? "interrupted" : "complete"));
  R3_TRY(H.addEvent(
      S.Outcome == TuneOutcome::Interrupted ? "interrupt" : "complete", S.Why));
  R3_TRY(backup(true));
  return S;
}

/// The shared copy of a node-local history, every BackupSeconds and at
/// the end (outside any transaction: the copy is of the last commit).
Error Loop::backup(bool Now) {
  if (BackupTo.empty())
    return Error::success();
  auto T = Clock::now();
  if (!Now && T - LastBackup < std::chrono::duration<double>(
                                   std::max(0.0, O.BackupSeconds)))
    return Error::success();
  LastBackup = T;
  return H.backupTo(BackupTo);
}
} // namespace

void requestCampaignStop() {
  StopRequested = 1;
  if (StopPipe[1] >= 0) {
    char C = 1;
    [[maybe_unused]] ssize_t N = ::write(StopPipe[1], &C, 1);
  }
}

unsigned defaultWorkers(Backend B) {
  if (B == Backend::Cuda)
    return std::max<unsigned>(1, static_cast<unsigned>(visibleGpus().size()));
  unsigned Cores = usableCores();
  return Cores > 2 ? Cores - 1 : 1;
}

/// A grid rule that names an argument the kernel does not have (arg9 of a
/// six-parameter kernel) would make every block change an invalid launch:
/// it is refused before the campaign starts. Names other than argN come
/// from the source, known once it compiles, and are not checked here.
static std::string paramRange(size_t N) {
  return N == 0 ? "none" : "arg0 to arg" + std::to_string(N - 1);
}

static Error checkGridRule(const KernelSpec &K, const CaptureReader &R,
                           uint32_t Kernel) {
  if (K.GridRule.empty())
    return Error::success();
  GridRule Rule;
  R3_TRY(moveInto(parseGridRule(K.GridRule), Rule));
  for (const LaunchInfo &L : R.launches()) {
    if (L.Kernel != Kernel)
      continue;
    LaunchValues V{L.Grid, L.Block, L.Block,
                   paramValues(L, R.kernels()[Kernel])};
    auto G = applyGridRule(Rule, V);
    if (!G && G.error().message().find("unknown name 'arg") !=
                  std::string::npos)
      return makeError(K.Capture, ": kernel '", K.Name, "': grid_rule '",
                       K.GridRule, "': ", G.error().message(),
                       " (the kernel's parameters are ",
                       paramRange(R.kernels()[Kernel].Params.size()), ")");
    break; // one launch shows it
  }
  return Error::success();
}

/// A kernel's capture opens and belongs to the campaign's backend.
static Error checkCapture(const Campaign &C, const KernelSpec &K) {
  auto R = CaptureReader::open(K.Capture);
  if (!R)
    return R.takeError();
  Backend Source = (*R)->header().Source;
  if (Source != C.Target)
    return makeError(K.Capture, ": a ", backendName(Source),
                     " capture, but the campaign's backend is ",
                     backendName(C.Target));
  uint32_t Index = 0;
  R3_TRY(moveInto(findKernel(**R, K.Name), Index));
  R3_TRY(kernelLaunches(**R, Index, K).takeError());
  return checkGridRule(K, **R, Index);
}

Error checkCaptures(const Campaign &C) {
  std::vector<std::string> Mistakes;
  for (const KernelSpec &K : C.Kernels) {
    if (!C.MissingCaptures.empty() && !pathExists(K.Capture))
      continue; // not recorded yet: the dry run says so
    if (Error E = checkCapture(C, K))
      Mistakes.push_back(E.message());
  }
  if (Mistakes.empty())
    return Error::success();
  return Error::make(join(Mistakes, "\n"));
}

/// The evaluations a history holds; none when it does not exist.
static Expected<std::optional<uint64_t>> evaluationsIn(const std::string &P) {
  if (!pathExists(P))
    return std::optional<uint64_t>();
  std::unique_ptr<History> H;
  R3_TRY(moveInto(History::open(P, HistoryMode::ReadOnly), H));
  uint64_t N = 0;
  R3_TRY(moveInto(H->evaluationCount(), N));
  return std::optional<uint64_t>(N);
}

/// The live history on a node-local disk (SQLite's WAL and its shared
/// memory file must not live on Lustre or GPFS, whose locks and mmap it
/// relies on): the newer of the local copy and the shared one, by the
/// evaluations each holds, copied to Dir when the shared one is newer.
static Expected<std::string> localHistory(const std::string &Shared,
                                          const std::string &Dir,
                                          TuneObserver &Obs) {
  std::error_code EC;
  std::filesystem::create_directories(Dir, EC);
  if (EC)
    return makeError(Dir, ": cannot create the folder for the local history: ",
                     EC.message());
  std::string Local =
      (std::filesystem::path(Dir) / std::filesystem::path(Shared).filename())
          .string();
  std::optional<uint64_t> InLocal, InShared;
  R3_TRY(moveInto(evaluationsIn(Local), InLocal));
  R3_TRY(moveInto(evaluationsIn(Shared), InShared));
  if (InShared && (!InLocal || *InShared > *InLocal)) {
    std::unique_ptr<History> H;
    R3_TRY(moveInto(History::open(Shared, HistoryMode::ReadOnly), H));
    R3_TRY(H->backupTo(Local));
    Obs.note("the live history is " + Local + ", copied from " + Shared +
             " (" + std::to_string(*InShared) + " evaluations" +
             (InLocal ? ", the local copy had " + std::to_string(*InLocal)
                      : std::string()) +
             ")");
  } else if (InLocal) {
    Obs.note("the live history is " + Local + " (" +
             std::to_string(*InLocal) + " evaluations; " + Shared + " has " +
             (InShared ? std::to_string(*InShared) : std::string("none")) +
             ")");
  }
  return Local;
}

Expected<TuneSummary> runCampaign(const Campaign &C, const TuneOptions &O,
                                  TuneObserver &Observer) {
  if (StopPipe[0] < 0 && ::pipe2(StopPipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return errnoError("tune: pipe");
  // Captures are checked before the database exists, so that a campaign
  // that cannot start leaves nothing behind to "resume".
  R3_TRY(checkCaptures(C));
  R3_TRY(llmApiKey(C).takeError());
  std::string Live = C.Database;
  if (!O.HistoryLocal.empty())
    R3_TRY(moveInto(localHistory(C.Database, O.HistoryLocal, Observer), Live));
  auto H = History::open(Live, pathExists(Live) ? HistoryMode::Open
                                                : HistoryMode::Create);
  if (!H)
    return H.takeError();
  unsigned N = O.Workers ? O.Workers
                         : (C.Workers ? C.Workers : defaultWorkers(C.Target));
  // One GPU a worker, round robin when there are more workers than GPUs;
  // none named where none is known (the servers then see what this
  // process sees).
  std::vector<std::string> Gpus;
  if (C.Target == Backend::Cuda)
    Gpus = C.Gpus.empty() ? visibleGpus() : C.Gpus;
  Loop L(C, O, Observer, **H, N, Gpus);
  if (!O.HistoryLocal.empty())
    L.BackupTo = C.Database;
  return L.run();
}

} // namespace r3
