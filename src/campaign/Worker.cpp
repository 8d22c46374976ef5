// Campaign workers (see Worker.h). Three threads: the main one reads jobs
// from the coordinator; the compiler compiles the sources of queued jobs
// (WorkerCompile.h: the host front end, or the whole CUDA variant compiler
// in an isolated child) while the runner hands compiled jobs to the replay
// server of their capture and sends the results back, so the device runs
// one candidate while the next compiles. A candidate that kills its server
// is a result (ServerClient restarts it); a worker whose coordinator
// disappears kills its servers and exits.
#include "campaign/Worker.h"
#include "support/Clock.h"

#include "campaign/WorkerCompile.h"
#include "capture/CaptureReader.h"
#include "replay/ServerClient.h"
#include "support/Machine.h"
#include "support/Process.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace r3 {

namespace {
namespace fs = std::filesystem;

/// A blocking queue closed once its producer is done.
template <typename T> class Queue {
public:
  void push(T V) {
    {
      std::lock_guard L(M);
      Items.push_back(std::move(V));
    }
    Cv.notify_one();
  }
  void close() {
    {
      std::lock_guard L(M);
      Closed = true;
    }
    Cv.notify_all();
  }
  std::optional<T> pop() {
    std::unique_lock L(M);
    Cv.wait(L, [&] { return Closed || !Items.empty(); });
    if (Items.empty())
      return std::nullopt;
    T V = std::move(Items.front());
    Items.pop_front();
    return V;
  }

private:
  std::mutex M;
  std::condition_variable Cv;
  std::deque<T> Items;
  bool Closed = false;
};

/// A job whose code is ready to run, or whose compile already failed.
struct Prepared {
  WorkerJob Job;
  JobCompiled Compiled;
  double Started = 0;
};

class Worker {
public:
  Worker(int In, int Out, unsigned Compilers)
      : In(In), Out(Out), Compilers(Compilers) {}
  Error run();

private:
  void compileLoop(JobCompiler &Compiler);
  void runnerLoop();
  Prepared prepare(WorkerJob J, JobCompiler &Compiler);
  CandidateResult evaluate(const WorkerJob &J, std::string &Device);
  Expected<ServerClient *> server(const std::string &Capture);
  void send(const std::vector<uint8_t> &Message);
  void killServers();

  int In, Out;
  unsigned Compilers;
  std::atomic<unsigned> CompilersLeft{0};
  std::mutex OutLock, ServersLock;
  Queue<WorkerJob> Jobs;
  Queue<Prepared> Ready;
  std::map<std::string, std::unique_ptr<ServerClient>> Servers;
  std::string Scratch;
};

void Worker::send(const std::vector<uint8_t> &Message) {
  std::lock_guard L(OutLock);
  // A coordinator that is gone cannot be told; the reader sees its end.
  (void)writeMessage(Out, Message);
}

Prepared Worker::prepare(WorkerJob J, JobCompiler &Compiler) {
  Prepared P;
  P.Started = nowSeconds();
  P.Compiled = Compiler.compile(J);
  P.Job = std::move(J);
  return P;
}

/// One compile thread; the last one to finish closes the runner's queue.
/// Each has its own compiler (its own in-memory results; the disk cache is
/// shared), so that compiles of different jobs run side by side.
void Worker::compileLoop(JobCompiler &Compiler) {
  while (auto J = Jobs.pop())
    Ready.push(prepare(std::move(*J), Compiler));
  if (--CompilersLeft == 0)
    Ready.close();
}

Expected<ServerClient *> Worker::server(const std::string &Capture) {
  std::lock_guard L(ServersLock);
  if (auto It = Servers.find(Capture); It != Servers.end())
    return It->second.get();
  ServerOptions O;
  O.CapturePath = Capture;
  {
    std::lock_guard Open(captureOpenLock());
    auto R = CaptureReader::open(Capture);
    if (!R)
      return R.takeError();
    O.AddressSpaceBytes = defaultAddressSpaceLimit(**R);
  }
  auto C = ServerClient::create(std::move(O));
  if (!C)
    return C.takeError();
  ServerClient *Raw = C->get();
  Servers[Capture] = std::move(*C);
  return Raw;
}

CandidateResult Worker::evaluate(const WorkerJob &J, std::string &Device) {
  auto S = server(J.Capture);
  if (!S)
    return failedResult(FailureKind::Crashed, S.takeError().message());
  Device = (*S)->opened().Device;
  auto R = (*S)->evaluate(J.Work);
  if (R)
    return std::move(*R);
  std::lock_guard L(ServersLock);
  Servers.erase(J.Capture); // the next job starts a fresh server
  return failedResult(FailureKind::Crashed, R.takeError().message());
}

void Worker::runnerLoop() {
  while (auto P = Ready.pop()) {
    auto T0 = std::chrono::steady_clock::now();
    WorkerResult Out;
    Out.Id = P->Job.Id;
    Out.Started = P->Started;
    const JobCompiled &C = P->Compiled;
    Out.Result = C.Failed ? *C.Failed : evaluate(P->Job, Out.Device);
    if (C.Failed) // the device it would have run on, for the history
      if (auto S = server(P->Job.Capture))
        Out.Device = (*S)->opened().Device;
    Out.Result.CompileMs += C.CompileMs;
    if (C.Spills && !Out.Result.Spills)
      Out.Result.Spills = C.Spills;
    if (C.CodegenOpt >= 0) {
      Out.Result.Pipeline = C.Pipeline;
      Out.Result.CodegenOpt = C.CodegenOpt;
    }
    Out.EvalMs = C.CompileMs + msSince(T0);
    Out.Finished = nowSeconds();
    send(encodeResult(Out));
  }
}

void Worker::killServers() {
  std::lock_guard L(ServersLock);
  for (auto &[Capture, Client] : Servers)
    if (Client->serverPid() > 0)
      ::kill(Client->serverPid(), SIGKILL);
}

Error Worker::run() {
  auto Dir =
      fs::temp_directory_path() / ("r3-worker-" + std::to_string(::getpid()));
  std::error_code EC;
  fs::create_directories(Dir, EC);
  Scratch = Dir.string();
  send(encodeHello({hostCpuName(), ::getpid()}));
  std::vector<std::unique_ptr<JobCompiler>> Compiling;
  std::vector<std::thread> CompileThreads;
  CompilersLeft = Compilers;
  for (unsigned I = 0; I < Compilers; ++I) {
    Compiling.push_back(std::make_unique<JobCompiler>(
        (fs::path(Scratch) / std::to_string(I)).string()));
    CompileThreads.emplace_back(
        [this, C = Compiling.back().get()] { compileLoop(*C); });
  }
  std::thread Runner([this] { runnerLoop(); });
  bool Orphaned = false;
  while (true) {
    auto M = readMessage(In);
    if (!M || !*M) {
      Orphaned = true;
      break;
    }
    if ((*M)->Kind == WorkerMessageKind::Shutdown)
      break;
    if ((*M)->Kind == WorkerMessageKind::Job)
      Jobs.push(std::move((*M)->Job));
  }
  if (Orphaned)
    killServers();
  Jobs.close();
  for (std::thread &T : CompileThreads)
    T.join();
  Runner.join();
  Servers.clear();
  fs::remove_all(Dir, EC);
  return Error::success();
}
} // namespace

unsigned compileThreads(unsigned Cores) {
  return std::clamp(Cores > 1 ? Cores - 1 : 1u, 1u, 12u);
}

Error runTuneWorker(int In, int Out, unsigned Compilers) {
  // The coordinator decides what a ^C means; a worker outliving it (kill -9)
  // dies with it.
  ::signal(SIGINT, SIG_IGN);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::signal(SIGPIPE, SIG_IGN);
  Worker W(In, Out, std::max(1u, Compilers));
  return W.run();
}

/// This process's environment, with CUDA_VISIBLE_DEVICES=Gpu when Gpu is
/// given.
static std::vector<std::string> workerEnvironment(const std::string &Gpu) {
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E)
    if (Gpu.empty() || !std::string_view(*E).starts_with("CUDA_VISIBLE_DEVICES="))
      Env.push_back(*E);
  if (!Gpu.empty())
    Env.push_back("CUDA_VISIBLE_DEVICES=" + Gpu);
  return Env;
}

Expected<std::unique_ptr<WorkerProcess>>
WorkerProcess::spawn(unsigned Index, const std::string &Gpu,
                     unsigned Compilers) {
  std::vector<std::string> Env = workerEnvironment(Gpu);
  PipedChildOptions O;
  O.OwnProcessGroup = true;
  O.StdoutToStderr = true;
  O.Environment = &Env;
  auto C = spawnPiped({"/proc/self/exe", "__tune-worker", "@IN@", "@OUT@",
                       std::to_string(std::max(1u, Compilers))},
                      O);
  if (!C)
    return makeError("tune worker: ", C.error().message());
  std::unique_ptr<WorkerProcess> P(new WorkerProcess());
  P->Index = Index;
  P->Pid = C->Pid;
  P->ToWorker = C->ToChild;
  P->FromWorker = C->FromChild;
  return P;
}

Error WorkerProcess::send(const std::vector<uint8_t> &Message) {
  return writeMessage(ToWorker, Message);
}

void WorkerProcess::shutdown(double Seconds) {
  if (Pid <= 0)
    return;
  (void)writeMessage(ToWorker, encodeShutdown());
  ::close(ToWorker);
  ToWorker = -1;
  auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(Seconds);
  int Status = 0;
  while (::waitpid(Pid, &Status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > Deadline) {
      ::kill(Pid, SIGKILL);
      ::waitpid(Pid, &Status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Pid = -1;
}

WorkerProcess::~WorkerProcess() {
  if (Pid > 0) {
    ::kill(Pid, SIGKILL);
    int Status;
    ::waitpid(Pid, &Status, 0);
  }
  if (ToWorker >= 0)
    ::close(ToWorker);
  if (FromWorker >= 0)
    ::close(FromWorker);
}

} // namespace r3
