// One launch seen by the injection library. Every launch is counted (its
// ordinal is the kernel's launch count so far) and, for selected kernels,
// registered for its duration. A launch the selection picks is recorded:
//   on API enter: the kernel's module image and description are sent once;
//     then the Launch frame (grid, block, shared bytes, parameter buffer); the
//     context is synchronized and the allocations the launch's pointers reach
//     (its parameters, its module's globals and, transitively, pointers
//     stored in what they reach: record/Reachable.h; with --memory all, every
//     live allocation its context can reach) and the module's globals are
//     copied and sent as pre-state (Snapshot.h);
//   on API exit (same thread): the launch's own result is checked, the context
//     synchronized again, and the regions that changed are sent as post-state.
// The state lock is held throughout each of the two halves, so launches of
// other threads wait while a recorded one is copied. A launch the capture
// cannot hold faithfully refuses the recording: cooperative launches,
// clusters, a device other than the capture's (one capture, one device's
// memory), texture or surface objects and references (LaunchChecks.h). One
// it holds but cannot replay exactly (managed memory) is warned about. A
// launch into a stream that is being captured into a CUDA graph is counted
// but not recorded: its kernel runs in graph launches, refused at exit.
#include "record/cuda/Injector.h"

#include "record/Messages.h"
#include "record/Reachable.h"
#include "record/cuda/Driver.h"
#include "support/Demangle.h"
#include "support/StringUtil.h"

#include <optional>

namespace r3::cuda {

namespace {
using namespace wire;

/// The recorded launch in flight on this thread, between enter and exit.
struct InFlight {
  std::unique_ptr<Snapshot> Regions;
  KernelState *Kernel = nullptr;
  uint64_t LaunchId = 0;
};
thread_local InFlight Current;

Expected<KernelState *> stateOf(CUfunction F) {
  auto It = State->Kernels.find(F);
  if (It != State->Kernels.end())
    return It->second.get();
  auto K = std::make_unique<KernelState>();
  K->Id = reinterpret_cast<uint64_t>(F);
  R3_TRY(moveInto(contextFunction(F), K->Function));
  R3_TRY(moveInto(kernelName(K->Function), K->Name));
  bool ListAll =
      State->Env.Mode == RecordMode::List && State->Env.Patterns.empty();
  K->Selected = ListAll || State->Selector.selects(K->Name);
  KernelState *P = K.get();
  State->Order.push_back(P);
  State->Kernels.emplace(F, std::move(K));
  return P;
}

Error refuse(const KernelState &K, uint64_t Ordinal, const char *What) {
  return makeError("launch ", Ordinal, " of '", K.Name, "' is ", What,
                   ", which r3 does not record yet; the capture was refused");
}

Error sendModule(LoadedModule &M) {
  if (M.Announced)
    return Error::success();
  R3_TRY(State->Writer.send(
      Type::Module, encode(ModuleMsg{M.Id, ModuleKind::Cubin}), M.Image));
  M.Announced = true;
  return Error::success();
}

/// Sends the kernel's Module and Kernel frames once.
Error announce(KernelState &K, CUfunction F) {
  if (K.Announced)
    return Error::success();
  LoadedModule *M = State->Modules.moduleOf(K.Name);
  if (!M)
    return makeError("no module image the application loaded defines '", K.Name,
                     "' (CUPTI reported ", State->Modules.describe(), ")");
  R3_TRY(sendModule(*M));
  R3_TRY(moveInto(paramLayout(F), K.Params));
  R3_TRY(moveInto(resolveGlobals(F, *M), K.Globals));
  KernelMsg Msg;
  Msg.Id = K.Id;
  Msg.ModuleId = M->Id;
  Msg.Info.Name = K.Name;
  Msg.Info.Demangled = demangle(K.Name);
  Msg.Info.Params = K.Params;
  Msg.Info.Globals = K.Globals;
  Msg.Info.Attributes = attributes(F);
  R3_TRY(State->Writer.send(Type::Kernel, encode(Msg)));
  K.Announced = true;
  return Error::success();
}

Expected<LaunchMsg> launchMessage(const KernelState &K, const LaunchCall &C,
                                  uint64_t Ordinal) {
  LaunchMsg M;
  M.Id = State->LaunchesSent;
  M.KernelId = K.Id;
  M.Info.Ordinal = Ordinal;
  M.Info.Grid = C.Grid;
  M.Info.Block = C.Block;
  M.Info.DynamicSharedBytes = C.SharedBytes;
  R3_TRY(moveInto(packParams(C, K.Params), M.Info.Params));
  return M;
}

/// The allocations the launch can reach and the kernel's globals, within the
/// size cap.
Expected<std::vector<RegionInfo>>
regions(const KernelState &K, const std::vector<DeviceAllocation> &Reached) {
  std::vector<RegionInfo> Out;
  uint64_t Total = 0;
  for (const DeviceAllocation &A : Reached) {
    Out.push_back({A.Base, A.Size, A.Kind, "", false});
    Total += A.Size;
  }
  for (const GlobalInfo &G : K.Globals) {
    Out.push_back({G.Address, G.Size, RegionKind::Global, G.Name, false});
    Total += G.Size;
  }
  uint64_t Cap = State->Env.MaxSnapshotBytes;
  if (Total > Cap)
    return makeError("the device memory the recorded launch of '", K.Name,
                     "' is more than the snapshot cap: ", Out.size(),
                     " regions of ", formatBytes(Total), " (", Total,
                     " bytes), cap ", formatBytes(Cap), " (", Cap,
                     " bytes; raise it with --max-bytes); the capture was "
                     "refused");
  return Out;
}

/// Of the allocations the context holds, those the launch's pointers reach:
/// from its parameters and its module's globals, through pointers stored in
/// what they reach (record/Reachable.h). The context is idle.
Expected<std::vector<DeviceAllocation>>
throughPointers(const KernelState &K, const LaunchMsg &Launch,
                std::vector<DeviceAllocation> Held) {
  std::vector<Extent> All, Globals;
  for (const DeviceAllocation &A : Held)
    All.push_back({A.Base, A.Size});
  for (const GlobalInfo &G : K.Globals)
    Globals.push_back({G.Address, G.Size});
  ReadMemory Read = [](uint64_t At, std::span<uint8_t> To) {
    return copyToHost(To.data(), At, To.size());
  };
  std::vector<bool> Reached;
  R3_TRY(moveInto(
      reachableAllocations(All, {Launch.Info.Params}, Globals, Read), Reached));
  std::vector<DeviceAllocation> Out;
  for (size_t I = 0; I < Held.size(); ++I)
    if (Reached[I])
      Out.push_back(Held[I]);
  return Out;
}

/// The launch's device (the current context's): a capture holds one.
Expected<int> launchDevice(const KernelState &K, uint64_t Ordinal) {
  int Device = NoDevice;
  R3_TRY(moveInto(currentDevice(), Device));
  R3_TRY(checkDevice(State->CaptureDevice, Device, Ordinal, K.Name));
  State->CaptureDevice = Device;
  return Device;
}

/// Textures and surfaces the kernel reads, from its cubin, its parameters and
/// the references looked up in its module: the capture cannot hold them. The
/// cubin is read again for each recorded launch, which copies all device
/// memory besides.
Error checkLaunchTextures(const KernelState &K, const LaunchMsg &L) {
  TextureFacts F;
  CUmodule M = nullptr;
  F.ModuleReferences = cuFuncGetModule(&M, K.Function) == CUDA_SUCCESS &&
                       State->Textures.hasReferences(M);
  F.HandleParam =
      textureParam(K.Params, L.Info.Params, State->Textures.liveObjects());
  // announce() found the module, or the launch failed before here.
  if (const LoadedModule *Module = State->Modules.moduleOf(K.Name)) {
    auto Use = readCubinTextureUse(Module->Image, K.Name);
    if (Use)
      F.Cubin = *Use;
    else
      F.CubinError = Use.takeError().message();
  } else {
    F.CubinError = "no module image defines it";
  }
  return checkTextures(K.Name, F);
}

/// Once per recording: managed memory is not replayed as the application
/// used it.
Error warnManaged(const KernelState &K, uint64_t Ordinal,
                  const std::vector<DeviceAllocation> &Reached) {
  if (State->ManagedWarned)
    return Error::success();
  std::optional<std::string> W = managedWarning(Reached, Ordinal, K.Name);
  if (!W)
    return Error::success();
  State->ManagedWarned = true;
  return State->Writer.send(Type::Warning, encodeWarning(*W));
}

Error beginRecording(KernelState &K, const LaunchCall &C, uint64_t Ordinal,
                     CUcontext Ctx) {
  if (C.Refusal == Unsupported::Cooperative)
    return refuse(K, Ordinal, "a cooperative launch");
  if (C.Refusal == Unsupported::ClusterDims)
    return refuse(K, Ordinal, "a launch with thread block clusters");
  int Device = NoDevice;
  R3_TRY(moveInto(launchDevice(K, Ordinal), Device));
  R3_TRY(helloLocked());
  R3_TRY(announce(K, K.Function));
  LaunchMsg Launch;
  R3_TRY(moveInto(launchMessage(K, C, Ordinal), Launch));
  R3_TRY(checkLaunchTextures(K, Launch));
  R3_TRY(synchronize());
  std::vector<DeviceAllocation> Reached =
      State->Memory.reachableFrom(Ctx, Device);
  if (!State->Env.AllMemory)
    R3_TRY(moveInto(throughPointers(K, Launch, std::move(Reached)), Reached));
  std::vector<RegionInfo> Infos;
  R3_TRY(moveInto(regions(K, Reached), Infos));
  R3_TRY(warnManaged(K, Ordinal, Reached));
  R3_TRY(State->Writer.send(Type::Launch, encode(Launch)));
  auto Snap = std::make_unique<Snapshot>(std::move(Infos), snapshotOut());
  R3_TRY(Snap->sendPre(Launch.Id));
  Current = {std::move(Snap), &K, Launch.Id};
  ++State->LaunchesSent;
  return Error::success();
}

/// Whether the launch only adds a node to a graph being captured from its
/// stream: the kernel runs, if ever, inside a graph launch, which the
/// activity API reports and the exit refuses (Inject.cpp, checkGraphs);
/// recording it here would synchronize the context, which capture forbids
/// (it would invalidate the application's graph). A stream the driver cannot
/// query counts as not capturing.
bool capturedIntoGraph(const LaunchCall &C) {
  CUstreamCaptureStatus S = CU_STREAM_CAPTURE_STATUS_NONE;
  return cuStreamIsCapturing(C.Stream, &S) == CUDA_SUCCESS &&
         S != CU_STREAM_CAPTURE_STATUS_NONE;
}

void countLaunch(KernelState &K, const LaunchCall &C) {
  if (K.Launches++ == 0) {
    K.FirstGrid = C.Grid;
    K.FirstBlock = C.Block;
  }
  if (!K.Untunable.empty() || State->Env.Mode != RecordMode::List)
    return;
  // What r3 record would refuse (beginRecording), said by r3 profile.
  if (C.Refusal == Unsupported::Cooperative)
    K.Untunable = "cooperative launches, which r3 does not record";
  else if (C.Refusal == Unsupported::ClusterDims)
    K.Untunable = "launches with thread block clusters, which r3 does not "
                  "record";
  else if (capturedIntoGraph(C))
    K.Untunable = "launched from a CUDA graph, which r3 does not record yet";
}

void timeLaunch(KernelState &K, uint32_t Correlation, uint64_t LaunchId) {
  std::lock_guard<std::mutex> T(State->TimedLock);
  State->Timed[Correlation] = {&K, LaunchId};
}
} // namespace

void onLaunchEnter(const CUpti_CallbackData &Data, const LaunchCall &Call) {
  std::lock_guard<std::mutex> L(State->Lock);
  if (State->Failed || State->Finished)
    return;
  auto K = stateOf(Call.Function);
  if (!K)
    return failLocked(K.takeError().message());
  uint64_t Ordinal = (*K)->Launches;
  countLaunch(**K, Call);
  // Only selected kernels are counted by name: the others' launches, most of
  // an application's, cost no string lookup.
  bool Record = State->Env.Mode == RecordMode::Record && (*K)->Selected &&
                State->Selector.countLaunch((*K)->Name) &&
                !capturedIntoGraph(Call);
  if (Record)
    if (Error E = beginRecording(**K, Call, Ordinal, Data.context))
      return failLocked(E.message());
  if ((*K)->Selected) {
    timeKernels(); // its module's load did already, unless it was not seen
    timeLaunch(**K, Data.correlationId, Record ? Current.LaunchId : NoLaunch);
  }
}

void onLaunchExit(const CUpti_CallbackData &Data) {
  if (!Current.Regions)
    return;
  InFlight Done = std::move(Current);
  Current = InFlight();
  std::lock_guard<std::mutex> L(State->Lock);
  if (State->Failed)
    return;
  const std::string &Name = Done.Kernel->Name;
  CUresult R = *static_cast<const CUresult *>(Data.functionReturnValue);
  Error E = check(R, Data.functionName);
  if (!E)
    E = synchronize();
  if (E)
    return failLocked("the recorded launch of '" + Name +
                      "' failed: " + E.message());
  if (Error P = Done.Regions->sendPost(Done.LaunchId))
    failLocked(P.message());
}

} // namespace r3::cuda
