// MPI campaigns (Mpi.h). Messages are the worker protocol's bytes, one MPI
// message each: tag 1 from rank 0 to a worker rank, tag 2 back. Rank 0
// sends with MPI_Isend and keeps each buffer in an outbox until the send
// completes, and asks each rank with MPI_Iprobe on every turn of its loop,
// so that it never blocks on a rank; worker ranks send with MPI_Send, which
// rank 0's polling completes. No collective runs once the campaign does.
#include "campaign/Mpi.h"

#include "campaign/Worker.h"
#include "support/Machine.h"
#include "support/StringUtil.h"

#include <cstdlib>
#include <string>

#ifdef R3_HAVE_MPI
#include "campaign/MpiStage.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <deque>
#include <map>
#include <poll.h>
#include <thread>
#include <unistd.h>
#endif

namespace r3 {

bool mpiLaunched() {
  for (const char *Var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(Var))
      return true;
  const char *Tasks = std::getenv("SLURM_NTASKS");
  auto N = Tasks ? parseInteger(Tasks, 0, INT32_MAX) : Expected<int64_t>(0);
  return std::getenv("SLURM_PROCID") && N && *N > 1;
}

#ifndef R3_HAVE_MPI
bool mpiBuilt() { return false; }
Expected<MpiJob> startMpi() {
  return Error::make("this r3 was built without MPI: it cannot run as the "
                     "ranks of a parallel job (rebuild with -DR3_WITH_MPI=ON "
                     "and an MPI library such as libopenmpi-dev)");
}
void finishMpi() {}
LinkFactory mpiLinks() { return {}; }
Expected<double> stageCaptures(const std::vector<std::string> &,
                               const std::string &) {
  return 0.0;
}
int runWorkerRank(const MpiJob &) { return 1; }
#else

namespace {
constexpr int TagToWorker = 1, TagToCoordinator = 2;
bool Started = false;
MpiJob Job;
std::vector<bool> ToldToExit; ///< rank 0: per rank
int LocalWorkerIndex = 0, LocalWorkers = 1;
MPI_Comm NodeComm = MPI_COMM_NULL; ///< a worker rank's node
std::string NodeName;
bool PlanSent = false; ///< rank 0: the staging plan went out
volatile sig_atomic_t StopSignal = 0;

std::string hostName() {
  char Buf[256] = {};
  ::gethostname(Buf, sizeof Buf - 1);
  return Buf;
}

/// The worker ranks of this node, and this rank's place among them: the
/// ranks that share memory with it, or those R3_NODE_NAME names alike.
Error placeOnNode() {
  MPI_Comm Workers;
  int Color = Job.Rank == 0 ? MPI_UNDEFINED : 0;
  R3_TRY(mpiError(MPI_Comm_split(MPI_COMM_WORLD, Color, Job.Rank, &Workers),
                  "MPI_Comm_split"));
  if (Workers == MPI_COMM_NULL)
    return Error::success();
  const char *Named = std::getenv("R3_NODE_NAME");
  NodeName = Named && *Named ? Named : hostName();
  if (Named && *Named)
    R3_TRY(mpiError(MPI_Comm_split(Workers,
                                   static_cast<int>(std::hash<std::string>()(
                                                        NodeName) &
                                                    0x3fffffff),
                                   Job.Rank, &NodeComm),
                    "MPI_Comm_split"));
  else
    R3_TRY(mpiError(MPI_Comm_split_type(Workers, MPI_COMM_TYPE_SHARED,
                                        Job.Rank, MPI_INFO_NULL, &NodeComm),
                    "MPI_Comm_split_type"));
  MPI_Comm_rank(NodeComm, &LocalWorkerIndex);
  MPI_Comm_size(NodeComm, &LocalWorkers);
  MPI_Comm_free(&Workers);
  return Error::success();
}

Error sendBlocking(const std::vector<uint8_t> &Bytes, int To, int Tag) {
  if (Bytes.size() > INT_MAX)
    return makeError("a message of ", Bytes.size(),
                     " bytes is larger than one MPI message may be");
  return mpiError(MPI_Send(Bytes.data(), static_cast<int>(Bytes.size()),
                           MPI_BYTE, To, Tag, MPI_COMM_WORLD),
                  "MPI_Send");
}

/// A message from From with Tag, if one has arrived.
Expected<std::optional<std::vector<uint8_t>>> tryReceive(int From, int Tag) {
  int Flag = 0;
  MPI_Status St;
  R3_TRY(mpiError(MPI_Iprobe(From, Tag, MPI_COMM_WORLD, &Flag, &St),
                  "MPI_Iprobe"));
  if (!Flag)
    return std::optional<std::vector<uint8_t>>();
  int Count = 0;
  MPI_Get_count(&St, MPI_BYTE, &Count);
  std::vector<uint8_t> Bytes(static_cast<size_t>(std::max(Count, 0)));
  R3_TRY(mpiError(MPI_Recv(Bytes.data(), Count, MPI_BYTE, From, Tag,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "MPI_Recv"));
  return std::optional<std::vector<uint8_t>>(std::move(Bytes));
}

/// Rank 0's link to one worker rank.
class MpiLink final : public WorkerLink {
public:
  explicit MpiLink(int Rank) : Rank(Rank) {}
  ~MpiLink() override { progress(); }

  Error send(std::vector<uint8_t> Message) override {
    if (Message.size() > INT_MAX)
      return makeError("a message of ", Message.size(),
                       " bytes is larger than one MPI message may be");
    Outbox.push_back({std::move(Message), MPI_REQUEST_NULL});
    Pending &P = Outbox.back();
    R3_TRY(mpiError(MPI_Isend(P.Bytes.data(), static_cast<int>(P.Bytes.size()),
                              MPI_BYTE, Rank, TagToWorker, MPI_COMM_WORLD,
                              &P.Request),
                    "MPI_Isend"));
    return Error::success();
  }
  int pollFd() const override { return -1; }
  Expected<Got> receive(WorkerMessage &Out) override {
    progress();
    std::optional<std::vector<uint8_t>> Bytes;
    R3_TRY(moveInto(tryReceive(Rank, TagToCoordinator), Bytes));
    if (!Bytes)
      return Got::Nothing;
    R3_TRY(moveInto(decodeMessage(*Bytes), Out));
    return Got::Message;
  }
  bool restartable() const override { return false; }
  void shutdown(double Seconds) override {
    if (ToldToExit[Rank])
      return;
    ToldToExit[Rank] = true;
    (void)send(encodeShutdown());
    auto Deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(Seconds);
    while (progress() && std::chrono::steady_clock::now() < Deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

private:
  struct Pending {
    std::vector<uint8_t> Bytes;
    MPI_Request Request;
  };
  /// Completes what it can of the outbox; true while sends are pending.
  bool progress() {
    for (auto It = Outbox.begin(); It != Outbox.end();) {
      int Done = 0;
      MPI_Test(&It->Request, &Done, MPI_STATUS_IGNORE);
      It = Done ? Outbox.erase(It) : std::next(It);
    }
    return !Outbox.empty();
  }

  int Rank;
  std::deque<Pending> Outbox;
};

// --- a worker rank ---

void onStopSignal(int Signal) { StopSignal = Signal; }

/// The GPU this rank's worker uses: R3_GPUS's list, else the visible ones;
/// the only one, or this rank's index on its node modulo their number.
std::string rankGpu() {
  std::vector<std::string> Gpus;
  if (const char *List = std::getenv("R3_GPUS"))
    for (const std::string &G : split(List, ','))
      if (!G.empty())
        Gpus.push_back(G);
  if (Gpus.empty())
    Gpus = visibleGpus();
  if (Gpus.size() <= 1)
    return std::getenv("R3_GPUS") && !Gpus.empty() ? Gpus.front() : "";
  return Gpus[static_cast<size_t>(LocalWorkerIndex) % Gpus.size()];
}

/// The cores this rank was given: SLURM_CPUS_PER_TASK, else its affinity.
unsigned rankCores() {
  if (const char *C = std::getenv("SLURM_CPUS_PER_TASK"))
    if (auto N = parseInteger(C, 1, 1 << 20))
      return static_cast<unsigned>(*N);
  return usableCores();
}

class Relay {
public:
  Relay(const MpiJob &J, std::map<std::string, std::string> Staged)
      : Rank(J.Rank),
        Where("rank " + std::to_string(J.Rank) + " on " + NodeName),
        Staged(std::move(Staged)), Gpu(rankGpu()),
        Compilers(compileThreads(rankCores())) {}
  int run();

private:
  Error start();
  Error toWorker();
  Error fromWorker(bool &Done);
  Error up(const std::vector<uint8_t> &Bytes) {
    return sendBlocking(Bytes, 0, TagToCoordinator);
  }

  int Rank;
  std::string Where;
  std::map<std::string, std::string> Staged; ///< capture -> node's copy
  std::string Gpu;
  unsigned Compilers;
  std::unique_ptr<WorkerProcess> P;
  bool StopSent = false, Exit = false;
};

Error Relay::start() {
  auto W = WorkerProcess::spawn(static_cast<unsigned>(Rank - 1), Gpu,
                                Compilers);
  if (!W)
    return W.takeError();
  P = std::move(*W);
  return Error::success();
}

/// A message from rank 0, if one arrived: a job for the worker, or the end.
Error Relay::toWorker() {
  std::optional<std::vector<uint8_t>> Bytes;
  R3_TRY(moveInto(tryReceive(0, TagToWorker), Bytes));
  if (!Bytes)
    return Error::success();
  auto M = decodeMessage(*Bytes);
  if (M && M->Kind == WorkerMessageKind::Shutdown) {
    P->shutdown(5);
    Exit = true;
    return Error::success();
  }
  // A job reads this node's staged copy of its capture, if there is one.
  if (M && M->Kind == WorkerMessageKind::Job)
    if (auto It = Staged.find(M->Job.Capture); It != Staged.end()) {
      M->Job.Capture = It->second;
      *Bytes = encodeJob(M->Job);
    }
  // A worker that died is restarted by fromWorker; this job is then lost
  // with the others, which the Lost message gives back.
  (void)P->send(*Bytes);
  return Error::success();
}

/// What the worker says, passed up with its results naming this rank; a
/// worker that died is started again and rank 0 told.
Error Relay::fromWorker(bool &Done) {
  pollfd Fd{P->readFd(), POLLIN, 0};
  Done = ::poll(&Fd, 1, 1) <= 0;
  if (Done)
    return Error::success();
  auto M = readMessage(P->readFd());
  if (!M || !*M) {
    std::string Why = M ? "it exited" : M.error().message();
    R3_TRY(start());
    return up(encodeLost(Where + ": its worker process died (" + Why +
                         "); another was started"));
  }
  WorkerMessage &Msg = **M;
  if (Msg.Kind == WorkerMessageKind::Result) {
    Msg.Result.Device += (Msg.Result.Device.empty() ? "" : " ") +
                         std::string("(") + Where + ")";
    return up(encodeResult(Msg.Result));
  }
  if (Msg.Kind == WorkerMessageKind::Hello)
    return up(encodeHello({Msg.Hello.Device + " (" + Where + ")",
                           Msg.Hello.Pid}));
  return Error::success();
}

int Relay::run() {
  for (int S : {SIGTERM, SIGUSR1, SIGINT})
    std::signal(S, onStopSignal);
  std::signal(SIGPIPE, SIG_IGN); // a worker that died is seen, not felt
  // A rank bound to one core on a node of many runs its worker, compiles
  // and replay server on that core: mpirun binds each rank to a core when
  // it starts two or fewer, which a user seldom means for r3.
  unsigned Node = std::thread::hardware_concurrency();
  if (usableCores() == 1 && Node > 1 && !std::getenv("SLURM_CPUS_PER_TASK"))
    std::fprintf(stderr,
                 "r3: warning: %s may use 1 of the node's %u cores (its "
                 "affinity): its worker, compiles and replay server share "
                 "it; give ranks cores with mpirun --bind-to none or "
                 "--map-by slot:PE=N (srun: --cpus-per-task=N)\n",
                 Where.c_str(), Node);
  if (Error E = start()) {
    std::fprintf(stderr, "r3: error: %s: %s\n", Where.c_str(),
                 E.message().c_str());
    return 1;
  }
  while (!Exit) {
    if (StopSignal && !StopSent) {
      StopSent = true;
      (void)up(encodeStop(Where + " got signal " + std::to_string(StopSignal)));
    }
    bool Idle = false;
    Error E = toWorker();
    if (!E && !Exit)
      E = fromWorker(Idle);
    if (E) {
      std::fprintf(stderr, "r3: error: %s: %s\n", Where.c_str(),
                   E.message().c_str());
      return 1;
    }
  }
  return 0;
}
} // namespace

bool mpiBuilt() { return true; }

Expected<MpiJob> startMpi() {
  if (Started)
    return Job;
  int Provided = 0;
  R3_TRY(mpiError(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED,
                                  &Provided),
                  "MPI_Init_thread"));
  Started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &Job.Rank);
  MPI_Comm_size(MPI_COMM_WORLD, &Job.Size);
  ToldToExit.assign(static_cast<size_t>(Job.Size), false);
  R3_TRY(placeOnNode());
  return Job;
}

void finishMpi() {
  if (!Started)
    return;
  if (Job.Rank == 0 && !PlanSent && Job.Size > 1) {
    // The campaign never started: the plan that says so ends the ranks.
    StagePlan Abort;
    Abort.Abort = true;
    (void)rootStage(Abort, Job.Size);
    PlanSent = true;
    std::fill(ToldToExit.begin(), ToldToExit.end(), true);
  }
  if (NodeComm != MPI_COMM_NULL)
    MPI_Comm_free(&NodeComm);
  if (Job.Rank == 0)
    for (int R = 1; R < Job.Size; ++R)
      if (!ToldToExit[R]) {
        ToldToExit[R] = true;
        (void)sendBlocking(encodeShutdown(), R, TagToWorker);
      }
  MPI_Finalize();
  Started = false;
}

LinkFactory mpiLinks() {
  return [](unsigned W) -> Expected<std::unique_ptr<WorkerLink>> {
    return std::unique_ptr<WorkerLink>(
        std::make_unique<MpiLink>(static_cast<int>(W) + 1));
  };
}

Expected<double> stageCaptures(const std::vector<std::string> &Captures,
                               const std::string &Dir) {
  auto T = std::chrono::steady_clock::now();
  StagePlan P;
  auto Made = makePlan(Captures, Dir);
  if (!Made)
    return Made.takeError(); // finishMpi sends the ranks an abort
  P = std::move(*Made);
  PlanSent = true;
  R3_TRY(rootStage(P, Job.Size));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T)
      .count();
}

int runWorkerRank(const MpiJob &J) {
  auto Staged = workerStage(LocalWorkerIndex == 0, NodeComm, NodeName);
  if (!Staged) {
    std::fprintf(stderr, "r3: error: rank %d on %s: %s\n", J.Rank,
                 NodeName.c_str(), Staged.error().message().c_str());
    return 1;
  }
  if (Staged->Abort)
    return 1; // rank 0 says why
  return Relay(J, std::move(Staged->Paths)).run();
}
#endif

} // namespace r3
