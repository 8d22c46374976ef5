// libr3-cuda-inject.so: loaded into an unmodified CUDA application by the
// driver itself (CUDA_INJECTION64_PATH), which calls InitializeInjection at
// cuInit. That is why it sees every allocation and launch at the driver level,
// whether the application links cudart statically or shared or calls the
// driver API directly.
//
// Under `r3 run --use` the library applies tuned kernels instead
// (InjectUse.cpp); nothing is recorded then.
//
// Start-up reads the contract of RecordEnv.h and removes it, marks the stream
// close-on-exec, and subscribes to CUPTI: driver API callbacks for the
// allocation, texture/surface object and launch calls, the module-loaded
// resource callback, and the kernel activity records that time launches.
// Hello is sent at the first recorded launch (driver calls are not allowed
// inside cuInit). At exit the activity buffers are flushed and the durations
// (or, with --list, the kernel list) go out with the Done frame, or the
// reason why the capture cannot be complete goes out as a Failure frame. The
// library links CUPTI, the driver and the C/C++ runtimes only: it runs inside
// the application, which may link its own HDF5, LLVM or MPI.
#include "record/cuda/Injector.h"

#include "record/Messages.h"
#include "use/InjectUse.h"
#include "record/cuda/Driver.h"
#include "support/Demangle.h"

#include <cupti_activity.h>

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define R3_EXPORT extern "C" __attribute__((visibility("default")))

namespace r3::cuda {

Injector *State = nullptr;

namespace {
using namespace wire;

/// Set while this thread runs a callback: driver calls the library makes
/// itself are not the application's.
thread_local int InCallback = 0;

void padFrame() {
  static const uint8_t Zeros[4096] = {};
  while (uint64_t Left = State->Writer.bulkLeft())
    if (State->Writer.sendBulk(
            std::span(Zeros, std::min<uint64_t>(Left, sizeof(Zeros)))))
      return;
}
} // namespace

void failLocked(const std::string &Message) {
  if (!State->Failed) {
    padFrame(); // a frame cut short would hide the message
    (void)State->Writer.send(Type::Failure, encodeFailure(Message));
  }
  State->Failed = true;
}

Error helloLocked() {
  if (State->HelloSent)
    return Error::success();
  CUdevice D = 0;
  R3_TRY(check(cuCtxGetDevice(&D), "cuCtxGetDevice"));
  HelloMsg M;
  M.Source = Backend::Cuda;
  M.Pid = static_cast<uint64_t>(::getpid());
  char Name[256] = {};
  R3_TRY(check(cuDeviceGetName(Name, sizeof(Name) - 1, D), "cuDeviceGetName"));
  M.Device.Name = Name;
  cuDeviceGetAttribute(&M.Device.ComputeMajor,
                       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, D);
  cuDeviceGetAttribute(&M.Device.ComputeMinor,
                       CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, D);
  cuDriverGetVersion(&M.Device.DriverVersion);
  size_t Bytes = 0;
  cuDeviceTotalMem(&Bytes, D);
  M.Device.MemoryBytes = Bytes;
  M.Device.Ordinal = static_cast<int>(D);
  char Bus[32] = {};
  if (cuDeviceGetPCIBusId(Bus, sizeof(Bus) - 1, D) == CUDA_SUCCESS)
    M.Device.PciBusId = Bus;
  R3_TRY(State->Writer.send(Type::Hello, encode(M)));
  State->HelloSent = true;
  if (!State->RingProblem.empty())
    R3_TRY(State->Writer.send(
        Type::Warning,
        encodeWarning("the record ring could not be used (" +
                      State->RingProblem +
                      "): region bytes go through the socket, more slowly")));
  return Error::success();
}

void timeKernels() {
  // Read first: selected kernels call this at every launch.
  if (!State->ActivityOn.load(std::memory_order_relaxed) &&
      !State->ActivityOn.exchange(true))
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

SnapshotOut snapshotOut() {
  SnapshotOut Out{&State->Writer, State->Ring.get(), false};
  if (!Out.Ring)
    return Out;
  if (!State->RingPinTried) {
    State->RingPinTried = true;
    const wire::BulkRing &R = State->Ring->ring();
    // Portable: pinned for every context, as a later launch may be in
    // another. Failing, copies go through pinned staging into the ring.
    State->RingPinned =
        cuMemHostRegister(R.base(), R.geometry().bytes(),
                          CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
  }
  Out.CopyIntoRing = State->RingPinned;
  return Out;
}

namespace {
void onDriverApi(CUpti_CallbackId Cbid, const CUpti_CallbackData &Data) {
  bool Enter = Data.callbackSite == CUPTI_API_ENTER;
  LaunchCall Call;
  if (decodeLaunch(Cbid, Data.functionParams, Call)) {
    if (Enter)
      onLaunchEnter(Data, Call);
    else
      onLaunchExit(Data);
    return;
  }
  if (Enter)
    return;
  CUresult R = *static_cast<const CUresult *>(Data.functionReturnValue);
  State->Memory.onApiExit(Cbid, Data.functionParams, R, Data.context);
  State->Textures.onApiExit(Cbid, Data.functionParams, R);
}

void onResource(CUpti_CallbackId Cbid, const CUpti_ResourceData &Data) {
  if (Cbid != CUPTI_CBID_RESOURCE_MODULE_LOADED || !Data.resourceDescriptor)
    return;
  const auto &M =
      *static_cast<const CUpti_ModuleResourceData *>(Data.resourceDescriptor);
  const LoadedModule &Loaded =
      State->Modules.onLoaded(M.moduleId, M.pCubin, M.cubinSize);
  if (State->ActivityOn)
    return;
  bool Selects = !Loaded.ParseError.empty(); // unknown kernels: time them
  for (size_t I = 0; !Selects && I < Loaded.Symbols.Kernels.size(); ++I)
    Selects = State->Selector.matches(Loaded.Symbols.Kernels[I]);
  if (Selects)
    timeKernels();
}

void CUPTIAPI callback(void *, CUpti_CallbackDomain Domain,
                       CUpti_CallbackId Cbid, const void *Data) {
  if (!Data)
    return;
  // A module load can happen inside one of our own driver calls: with lazy
  // loading (CUDA's default), the first cuFuncGetName of a launch loads the
  // kernel's module. Its image must be kept even then; storing it makes no
  // driver call.
  if (Domain == CUPTI_CB_DOMAIN_RESOURCE) {
    onResource(Cbid, *static_cast<const CUpti_ResourceData *>(Data));
    return;
  }
  if (InCallback)
    return;
  ++InCallback;
  if (Domain == CUPTI_CB_DOMAIN_DRIVER_API)
    onDriverApi(Cbid, *static_cast<const CUpti_CallbackData *>(Data));
  --InCallback;
}

/// Adds one run of graph kernel Name to its total (list mode).
void addGraphTime(const std::string &Name, uint64_t Ns) {
  auto &Times = State->GraphTimes;
  auto It = std::find_if(Times.begin(), Times.end(),
                         [&](const auto &T) { return T.first == Name; });
  if (It == Times.end())
    It = Times.insert(Times.end(), {Name, {0, 0}});
  ++It->second.first;
  It->second.second += Ns;
}

/// One kernel's activity record: its launch's duration, or a graph's kernel.
void onKernelRecord(const CUpti_ActivityKernel10 &R) {
  auto It = State->Timed.find(R.correlationId);
  if (It != State->Timed.end()) {
    KernelState &K = *It->second.Kernel;
    uint64_t Ns = R.end > R.start ? R.end - R.start : 0;
    K.TotalNs += Ns;
    ++K.TimedLaunches;
    K.Durations.push_back({Ns, It->second.LaunchId});
    State->Timed.erase(It);
  } else if (R.graphId != 0 && R.name) {
    State->GraphKernels.push_back(R.name);
    if (State->Env.Mode == RecordMode::List)
      addGraphTime(R.name, R.end > R.start ? R.end - R.start : 0);
  }
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *Buffer, size_t,
                              size_t Valid) {
  {
    std::lock_guard<std::mutex> T(State->TimedLock);
    CUpti_Activity *Record = nullptr;
    while (cuptiActivityGetNextRecord(Buffer, Valid, &Record) == CUPTI_SUCCESS)
      if (Record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
          Record->kind == CUPTI_ACTIVITY_KIND_KERNEL)
        onKernelRecord(*reinterpret_cast<CUpti_ActivityKernel10 *>(Record));
  }
  std::free(Buffer);
}

Error subscribe() {
  CUpti_SubscriberHandle Subscriber;
  R3_TRY(
      check(cuptiSubscribe(&Subscriber, callback, nullptr), "cuptiSubscribe"));
  std::vector<CUpti_CallbackId> Ids = DeviceMemory::callbacks();
  for (const auto *More : {&launchCallbacks(), &TextureTable::callbacks()})
    Ids.insert(Ids.end(), More->begin(), More->end());
  for (CUpti_CallbackId Id : Ids)
    R3_TRY(check(
        cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_DRIVER_API, Id),
        "cuptiEnableCallback"));
  R3_TRY(check(cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                   CUPTI_CBID_RESOURCE_MODULE_LOADED),
               "cuptiEnableCallback"));
  return Error::success();
}

/// Durations through the activity API. Optional: where CUPTI cannot trace
/// activity (some sandboxes), launches are recorded with unknown durations.
/// List mode times every kernel from the start.
void enableActivity() {
  if (cuptiActivityRegisterCallbacks(requestActivityBuffer, bufferCompleted) !=
      CUPTI_SUCCESS)
    State->ActivityOn = true; // nothing to turn on
  if (State->Env.Mode == RecordMode::List)
    timeKernels();
}

std::string display(const std::string &Name) {
  std::string D = demangle(Name);
  return D.empty() ? Name : D;
}

std::string noLaunchMessage() {
  std::string Patterns, Seen;
  for (const std::string &P : State->Env.Patterns)
    Patterns += (Patterns.empty() ? "'" : " or '") + P + "'";
  bool SelectedRan = false;
  for (const KernelState *K : State->Order) {
    SelectedRan |= K->Selected;
    Seen += (Seen.empty() ? "" : ", ") + display(K->Name) + " (" +
            std::to_string(K->Launches) +
            (K->Launches == 1 ? " launch)" : " launches)");
  }
  std::string Out =
      "no launch of " + (Patterns.empty() ? "a kernel" : Patterns) +
      " was seen" + (SelectedRan ? " in the selected launch range" : "") +
      " (" + (Seen.empty() ? "no kernel ran" : "kernels seen: " + Seen) + ")";
  if (SelectedRan) {
    Out += "; launches are counted from 0:";
    for (const KernelState *K : State->Order)
      if (K->Selected && K->Launches > 0)
        Out += " '" + display(K->Name) + "' was launched " +
               (K->Launches == 1 ? std::string("once (launch 0)")
                                 : std::to_string(K->Launches) +
                                       " times (launches 0 to " +
                                       std::to_string(K->Launches - 1) + ")");
  }
  return Out;
}

/// A selected kernel that ran inside a CUDA graph makes the capture
/// incomplete: its graph launches were neither counted nor recordable.
Error checkGraphs() {
  for (const std::string &Name : State->GraphKernels)
    if (State->Selector.selects(Name))
      return makeError("'", display(Name),
                       "' was launched from a CUDA graph, which r3 does not "
                       "record yet; the capture was refused");
  return Error::success();
}

Error sendDurations() {
  for (const KernelState *K : State->Order)
    if (K->Announced)
      for (auto [Ns, Launch] : K->Durations)
        R3_TRY(State->Writer.send(Type::Duration,
                                  encode(DurationMsg{K->Id, Launch, Ns})));
  return Error::success();
}

/// Kernels that ran in graph launches count their runs' time (the activity
/// API's) and are not tunable; the runs are taken from GraphTimes. Launches
/// stays the launches the application made (a launch captured into a graph
/// is one), or the runs for a kernel only ever in graphs.
void addGraphRuns(KernelStatsMsg &M) {
  auto &Times = State->GraphTimes;
  auto It = std::find_if(Times.begin(), Times.end(),
                         [&](const auto &T) { return T.first == M.Name; });
  if (It == Times.end())
    return;
  if (M.Launches == 0)
    M.Launches = It->second.first;
  M.TimedLaunches += It->second.first;
  M.TotalNs += It->second.second;
  M.Untunable = "launched from a CUDA graph, which r3 does not record yet";
  Times.erase(It);
}

Error sendList() {
  for (const KernelState *K : State->Order) {
    if (!K->Selected || K->Launches == 0)
      continue;
    KernelStatsMsg M{K->Name, demangle(K->Name), K->Launches, K->TotalNs};
    M.Grid = K->FirstGrid;
    M.Block = K->FirstBlock;
    M.TimedLaunches = K->TimedLaunches;
    M.Untunable = K->Untunable;
    addGraphRuns(M);
    R3_TRY(State->Writer.send(Type::KernelStats, encode(M)));
  }
  while (!State->GraphTimes.empty()) { // graph kernels never launched alone
    KernelStatsMsg M{State->GraphTimes.front().first, "", 0, 0};
    M.Demangled = demangle(M.Name);
    addGraphRuns(M);
    if (State->Env.Patterns.empty() || State->Selector.selects(M.Name))
      R3_TRY(State->Writer.send(Type::KernelStats, encode(M)));
  }
  return Error::success();
}

Error finishRecording() {
  if (State->Env.Mode == RecordMode::List)
    return sendList();
  R3_TRY(checkGraphs());
  if (State->LaunchesSent == 0)
    return Error::make(noLaunchMessage());
  return sendDurations();
}

void finish() {
  if (!State)
    return;
  ++InCallback;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); // without our locks
  std::lock_guard<std::mutex> L(State->Lock);
  std::lock_guard<std::mutex> T(State->TimedLock);
  if (State->Failed || State->Finished)
    return;
  State->Finished = true;
  if (Error E = finishRecording())
    return failLocked(E.message());
  (void)State->Writer.send(Type::Done, MetaWriter());
}

void atForkChild() {
  // The child is not recorded and never writes into the parent's stream.
  State->Finished = true;
  State->Failed = true;
  ::close(State->Env.StreamFd);
}

void removeContract() {
  for (const char *Name : recordenv::All)
    ::unsetenv(Name);
}

Error start(RecordEnv Env) {
  std::vector<std::string> Patterns = Env.Patterns;
  if (Patterns.empty())
    Patterns.push_back(""); // every kernel
  auto Selector = KernelSelector::create(Patterns, Env.Range);
  State = new Injector;
  State->Writer = FrameWriter(Env.StreamFd, SendMode::SocketNoSignal);
  if (Env.RingFd >= 0) {
    auto Ring =
        BulkRing::attach(Env.RingFd, {Env.RingSlots, Env.RingSlotBytes});
    if (Ring)
      State->Ring = std::make_unique<RingWriter>(std::move(*Ring), Env.StreamFd,
                                                 State->Writer);
    else
      State->RingProblem = Ring.error().message();
  }
  State->Env = std::move(Env);
  std::atexit(finish);
  ::pthread_atfork(nullptr, nullptr, atForkChild);
  if (!Selector)
    return Selector.takeError();
  State->Selector = std::move(*Selector);
  R3_TRY(subscribe());
  enableActivity();
  return Error::success();
}

int initialize() {
  auto Env = decodeRecordEnv([](const char *N) { return ::getenv(N); });
  removeContract();
  if (!Env || !*Env) {
    startUse(); // under r3 run --use, or nothing to do
    return 1;
  }
  if (::fcntl((*Env)->StreamFd, F_SETFD, FD_CLOEXEC) != 0)
    return 1; // no stream to record into
  if (Error E = start(std::move(**Env))) {
    std::lock_guard<std::mutex> L(State->Lock);
    failLocked("the CUDA injection library could not start: " + E.message());
  }
  return 1;
}
} // namespace

} // namespace r3::cuda

/// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names
/// this library. Returns nonzero: the driver goes on either way.
R3_EXPORT int InitializeInjection(void) { return r3::cuda::initialize(); }
