// The injection library under `r3 run --use` (use/UsePlan.h): launches of
// the planned kernels run the campaign's tuned cubin, with its launch
// settings, in place of the application's code. Nothing is recorded.
//
// How: the library subscribes to the launch callbacks (cuLaunchKernel,
// cuLaunchKernelEx and their per-thread-stream forms) and, on API enter,
// rewrites the call's parameters in place: the function handle becomes the
// tuned cubin's function (loaded once per context), and the grid, block and
// dynamic shared memory become the campaign's (the grid from the launch's
// own grid through the campaign's grid rule). A kernel is matched by its
// mangled name and by the SHA-256 of the module image that defines it
// (CUPTI's module-loaded callback): an application whose kernel changed is
// refused. The tuned module's __device__ and __constant__ variables are not
// the application's: before each replaced launch the application's values
// are copied in, and after it copied back, on the launch's stream.
//
// Cooperative and cluster launches, and launches into a stream that is being
// captured into a CUDA graph, keep the application's code.
//
// --verify-launches N: for the first N launches of each replaced kernel, the
// context is synchronized, every allocation the launch can reach is copied
// aside, the application's own kernel runs on them (launched by the library)
// and its outputs are kept, the inputs are restored, the tuned kernel runs,
// and every allocation must then match under the campaign's tolerance; a
// mismatch stops the process with what differed. With --time-kernels such a
// launch's time is the tuned kernel's: a kernel that started before the
// check was done is the check's run of the original, and is not counted.
#include "use/InjectUse.h"
#include "cubin/CubinSymbols.h"
#include "record/cuda/DeviceMemory.h"
#include "record/cuda/Driver.h"
#include "record/cuda/Launch.h"
#include "replay/LaunchRule.h"
#include "replay/Verify.h"
#include "support/FileUtil.h"
#include "support/Sha256.h"
#include "use/UsePlan.h"

#include <cupti_activity.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <unistd.h>
#include <unordered_map>

namespace r3::cuda {

namespace {

/// Bytes a checked launch may copy aside.
constexpr uint64_t MaxCheckedBytes = 8ull << 30;

/// A pair of same-named globals: the application's and the tuned module's.
struct GlobalPair {
  CUdeviceptr App = 0, Tuned = 0;
  size_t Size = 0;
};

/// The tuned code in one context.
struct Loaded {
  CUfunction Function = nullptr;
  std::vector<GlobalPair> Globals;
  std::string Error; ///< why it could not be loaded
  int MaxDynamicShared = -1;
};

struct TunedKernel {
  const use::KernelPlan *Plan = nullptr;
  std::string Cubin;
  GridRule Rule;
  use::Outcome What = use::Outcome::Replaced;
  bool Seen = false;
  std::string Message;
  std::atomic<uint64_t> Launches{0}, Verified{0};
  uint64_t Timed = 0, KernelNs = 0; ///< under TimedLock
  Dim3 Grid{}, Block{};             ///< the last tuned launch's
  std::map<CUcontext, Loaded> PerContext;
};

/// What a launch handle is.
struct Handle {
  TunedKernel *Kernel = nullptr; ///< null: not planned
  CUfunction Function = nullptr; ///< the application's, in its context
  std::vector<ParamInfo> Params;
};

struct Region {
  uint64_t Base = 0, Size = 0;
  CUdeviceptr Copy = 0;
  std::vector<uint8_t> Expected;
};

/// A checked launch between API enter and exit, on this thread.
struct Checking {
  TunedKernel *Kernel = nullptr;
  uint64_t Ordinal = 0;
  std::vector<Region> Regions;
};

/// A replaced launch between API enter and exit, on this thread.
struct InFlight {
  Loaded *Code = nullptr;
  CUstream Stream = nullptr;
  std::unique_ptr<Checking> Check;
};

struct User {
  use::Plan Plan;
  std::string ReportDir;
  std::vector<std::unique_ptr<TunedKernel>> Kernels;
  std::mutex Lock; ///< everything below, and the kernels' state
  std::unordered_map<CUfunction, Handle> Handles;
  std::mutex HashLock; ///< Modules (taken alone, in the resource callback)
  std::map<std::string, std::string> Modules; ///< kernel → latest module hash
  DeviceMemory Memory;                        ///< when launches are checked
  bool Reported = false;
  /// Taken alone by CUPTI's activity thread; never held across a driver
  /// call (a buffer may complete inside any).
  std::mutex TimedLock;
  /// A launch whose kernel time --time-kernels adds up, by correlation id.
  /// A verified launch first runs the application's own kernel from inside
  /// the launch's callback; its activity record may carry the launch's
  /// correlation id, so only a kernel that started at NotBefore or later
  /// (once that check was done) is the tuned code's.
  struct TimedLaunch {
    TunedKernel *Kernel = nullptr;
    uint64_t NotBefore = 0; ///< CUPTI timestamp, ns
  };
  std::unordered_map<uint32_t, TimedLaunch> Timed;
};

User *U = nullptr;
thread_local int InCallback = 0;
/// Set while this thread loads a tuned cubin: its module-loaded callback is
/// not the application's module (whose hash identifies the kernel).
thread_local bool LoadingTuned = false;
thread_local InFlight Current;

void warn(const std::string &Message) {
  std::fprintf(stderr, "r3 run: warning: %s\n", Message.c_str());
}

void reportLocked() {
  if (U->Reported || U->ReportDir.empty())
    return;
  U->Reported = true;
  use::ProcessReport R;
  R.Pid = static_cast<uint64_t>(::getpid());
  std::lock_guard<std::mutex> T(U->TimedLock);
  for (const auto &K : U->Kernels)
    if (K->Seen)
      R.Kernels.push_back({K->Plan->Name, K->What, K->Launches.load(),
                           K->Verified.load(), K->Timed, K->KernelNs,
                           K->Message, K->Grid, K->Block});
  if (Error E = use::writeReportFile(U->ReportDir, R.Pid, use::encodeReport(R)))
    warn("the run report could not be written: " + E.message());
}

void atExit() {
  ++InCallback;
  if (U->Plan.TimeKernels)
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); // without locks
  std::lock_guard<std::mutex> L(U->Lock);
  reportLocked();
}

void atForkChild() {
  U->Reported = false;
  for (auto &K : U->Kernels) {
    K->Launches = 0;
    K->Verified = 0;
    K->Seen = false;
    K->Timed = K->KernelNs = 0;
    K->Grid = K->Block = Dim3{};
  }
}

/// Stops the process (Lock held): the tuned code disagreed with the
/// original, or could not be checked.
[[noreturn]] void stopOnMismatch(TunedKernel &K, uint64_t Ordinal,
                                 const std::string &What) {
  K.What = use::Outcome::VerifyFailed;
  K.Message = "launch " + std::to_string(Ordinal) + ": " + What;
  use::printMismatch(K.Plan->Name, K.Message);
  reportLocked(); // the caller holds Lock
  ::_exit(1);
}

// --- modules ---

void onModuleLoaded(const CUpti_ModuleResourceData &M) {
  if (LoadingTuned || !M.pCubin || M.cubinSize == 0)
    return;
  std::span Image(reinterpret_cast<const uint8_t *>(M.pCubin), M.cubinSize);
  auto Symbols = readCubinSymbols(Image);
  if (!Symbols)
    return;
  std::string Hash;
  for (const std::string &Name : Symbols->Kernels) {
    if (!U->Plan.find(Name))
      continue;
    if (Hash.empty())
      Hash = sha256Hex(std::string_view(
          reinterpret_cast<const char *>(Image.data()), Image.size()));
    std::lock_guard<std::mutex> L(U->HashLock);
    U->Modules[Name] = Hash;
  }
}

std::string moduleHash(const std::string &Kernel) {
  std::lock_guard<std::mutex> L(U->HashLock);
  auto It = U->Modules.find(Kernel);
  return It == U->Modules.end() ? "" : It->second;
}

/// The tuned code in the current context, loaded the first time.
Loaded &loadTuned(TunedKernel &K, CUfunction AppFunction) {
  CUcontext Ctx = nullptr;
  cuCtxGetCurrent(&Ctx);
  auto [It, New] = K.PerContext.try_emplace(Ctx);
  Loaded &L = It->second;
  if (!New)
    return L;
  CUmodule Module = nullptr;
  LoadingTuned = true;
  Error E =
      check(cuModuleLoadData(&Module, K.Cubin.data()), "cuModuleLoadData");
  LoadingTuned = false;
  if (!E)
    E = check(cuModuleGetFunction(&L.Function, Module, K.Plan->Name.c_str()),
              "cuModuleGetFunction");
  if (E) {
    L.Error = "the tuned cubin could not be loaded: " + E.message();
    L.Function = nullptr;
    return L;
  }
  if (K.Plan->CachePreference == "shared")
    cuFuncSetCacheConfig(L.Function, CU_FUNC_CACHE_PREFER_SHARED);
  else if (K.Plan->CachePreference == "l1")
    cuFuncSetCacheConfig(L.Function, CU_FUNC_CACHE_PREFER_L1);
  else if (K.Plan->CachePreference == "equal")
    cuFuncSetCacheConfig(L.Function, CU_FUNC_CACHE_PREFER_EQUAL);
  // The application's globals, paired with the tuned module's by name.
  CUmodule AppModule = nullptr;
  if (cuFuncGetModule(&AppModule, AppFunction) != CUDA_SUCCESS)
    return L;
  auto Symbols = readCubinSymbols(std::span(
      reinterpret_cast<const uint8_t *>(K.Cubin.data()), K.Cubin.size()));
  if (!Symbols)
    return L;
  for (const CubinGlobal &G : Symbols->Globals) {
    GlobalPair P;
    size_t AppSize = 0;
    if (cuModuleGetGlobal(&P.Tuned, &P.Size, Module, G.Name.c_str()) ==
            CUDA_SUCCESS &&
        cuModuleGetGlobal(&P.App, &AppSize, AppModule, G.Name.c_str()) ==
            CUDA_SUCCESS &&
        AppSize == P.Size && P.Size > 0)
      L.Globals.push_back(P);
  }
  return L;
}

// --- checked launches ---

Error launchOriginal(const LaunchCall &C, CUpti_CallbackId Cbid,
                     const void *Params) {
  ++InCallback; // our own launch is not the application's
  CUresult R;
  if (Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
      Cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
    const auto &P = *static_cast<const cuLaunchKernelEx_params *>(Params);
    R = cuLaunchKernelEx(P.config, P.f, P.kernelParams, P.extra);
  } else {
    R = cuLaunchKernel(C.Function, C.Grid[0], C.Grid[1], C.Grid[2], C.Block[0],
                       C.Block[1], C.Block[2], C.SharedBytes, C.Stream,
                       C.KernelParams, C.Extra);
  }
  --InCallback;
  R3_TRY(check(R, "cuLaunchKernel (the original kernel)"));
  return synchronize();
}

/// Runs the application's kernel on copies of what the launch can reach and
/// keeps its outputs, then restores the inputs.
Expected<std::unique_ptr<Checking>> beginCheck(TunedKernel &K, uint64_t Ordinal,
                                               const LaunchCall &C,
                                               CUpti_CallbackId Cbid,
                                               const void *Params) {
  auto Out = std::make_unique<Checking>();
  Out->Kernel = &K;
  Out->Ordinal = Ordinal;
  R3_TRY(synchronize());
  CUcontext Ctx = nullptr;
  cuCtxGetCurrent(&Ctx);
  int Device = 0;
  R3_TRY(moveInto(currentDevice(), Device));
  uint64_t Total = 0;
  for (const DeviceAllocation &A : U->Memory.reachableFrom(Ctx, Device)) {
    Total += A.Size;
    if (Total > MaxCheckedBytes)
      return makeError("the launch reaches more than ", MaxCheckedBytes >> 30,
                       " GiB of device memory");
    Region R{A.Base, A.Size, 0, {}};
    R3_TRY(check(cuMemAlloc(&R.Copy, A.Size), "cuMemAlloc"));
    Out->Regions.push_back(std::move(R));
    R3_TRY(check(cuMemcpyDtoD(Out->Regions.back().Copy, A.Base, A.Size),
                 "cuMemcpyDtoD"));
  }
  R3_TRY(launchOriginal(C, Cbid, Params));
  for (Region &R : Out->Regions) {
    R.Expected.resize(R.Size);
    R3_TRY(copyToHost(R.Expected.data(), R.Base, R.Size));
    R3_TRY(check(cuMemcpyDtoD(R.Base, R.Copy, R.Size), "cuMemcpyDtoD"));
    cuMemFree(R.Copy);
    R.Copy = 0;
  }
  return Out;
}

void endCheck(Checking &C) {
  TunedKernel &K = *C.Kernel;
  if (Error E = synchronize())
    stopOnMismatch(K, C.Ordinal, "the tuned kernel failed: " + E.message());
  VerifySettings S;
  S.Tolerance = static_cast<ToleranceKind>(K.Plan->Tolerance);
  S.Value = K.Plan->ToleranceValue;
  S.Type = static_cast<ElementType>(K.Plan->ElementType);
  Verifier V(S);
  std::vector<uint8_t> Actual;
  for (const Region &R : C.Regions) {
    Actual.resize(R.Size);
    if (Error E = copyToHost(Actual.data(), R.Base, R.Size))
      stopOnMismatch(K, C.Ordinal, E.message());
    char Label[96];
    std::snprintf(Label, sizeof Label, "allocation 0x%llx (%llu bytes)",
                  static_cast<unsigned long long>(R.Base),
                  static_cast<unsigned long long>(R.Size));
    V.checkRegion({Label, R.Expected, Actual, RegionRole::Output});
  }
  if (!V.report().passed())
    stopOnMismatch(K, C.Ordinal, V.report().message());
  ++K.Verified;
}

// --- launches ---

/// What a launch handle is, looked up the first time (outside the lock: the
/// driver calls may load the module, whose callback takes HashLock).
Handle handleOf(CUfunction H) {
  {
    std::lock_guard<std::mutex> L(U->Lock);
    auto It = U->Handles.find(H);
    if (It != U->Handles.end())
      return It->second;
  }
  Handle Out;
  auto F = contextFunction(H);
  auto Name = F ? kernelName(*F) : Expected<std::string>(F.takeError());
  if (F && Name) {
    Out.Function = *F;
    for (auto &K : U->Kernels)
      if (K->Plan->Name == *Name)
        Out.Kernel = K.get();
    if (Out.Kernel) {
      auto P = paramLayout(*F);
      if (P)
        Out.Params = std::move(*P);
    }
  }
  std::lock_guard<std::mutex> L(U->Lock);
  return U->Handles.emplace(H, std::move(Out)).first->second;
}

bool capturing(CUstream S) {
  CUstreamCaptureStatus Status = CU_STREAM_CAPTURE_STATUS_NONE;
  return cuStreamIsCapturing(S, &Status) == CUDA_SUCCESS &&
         Status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void refuseOrFail(TunedKernel &K, use::Outcome O, const std::string &Why) {
  if (K.What != use::Outcome::Replaced)
    return;
  K.What = O;
  K.Message = Why;
  warn(Why);
}

void onLaunchEnter(CUpti_CallbackId Cbid, const CUpti_CallbackData &Data) {
  LaunchCall C;
  if (!decodeLaunch(Cbid, Data.functionParams, C) ||
      C.Refusal != Unsupported::None)
    return;
  Handle H = handleOf(C.Function);
  if (!H.Kernel)
    return;
  TunedKernel &K = *H.Kernel;
  std::lock_guard<std::mutex> L(U->Lock);
  K.Seen = true;
  if (K.What != use::Outcome::Replaced)
    return;
  std::string Hash = moduleHash(K.Plan->Name);
  if (Hash != K.Plan->ModuleSha256)
    return refuseOrFail(K, use::Outcome::Refused,
                        use::changedKernelMessage(K.Plan->Name, "module", Hash,
                                                  K.Plan->ModuleSha256));
  if (capturing(C.Stream))
    return; // a graph being captured keeps the application's code
  if (U->Plan.TimeKernels) {
    std::lock_guard<std::mutex> T(U->TimedLock);
    U->Timed[Data.correlationId] = {&K, 0};
  }
  if (U->Plan.KeepOriginal) {
    ++K.Launches;
    return;
  }
  Loaded &Code = loadTuned(K, H.Function);
  if (!Code.Function)
    return refuseOrFail(K, use::Outcome::Failed, Code.Error);
  auto Shape = plannedShape(K.Rule, K.Plan->Block, C, H.Params);
  if (!Shape)
    return refuseOrFail(K, use::Outcome::Failed,
                        "the campaign's grid rule does not apply: " +
                            Shape.error().message());
  // A kernel that strides over its grid: the grid in x the campaign chose,
  // per multiprocessor of the device that runs this launch.
  if (K.Plan->GridX)
    Shape->first[0] = K.Plan->GridX;
  if (K.Plan->GridPerSm) {
    CUdevice Dev = 0;
    int Sms = 0;
    if (cuCtxGetDevice(&Dev) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&Sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                             Dev) != CUDA_SUCCESS ||
        Sms <= 0)
      return refuseOrFail(K, use::Outcome::Failed,
                          "the device's multiprocessor count, which the "
                          "campaign's grid_per_sm needs, is not known");
    Shape->first[0] = K.Plan->GridPerSm * static_cast<uint32_t>(Sms);
  }
  uint32_t Shared = K.Plan->DynamicShared >= 0
                        ? static_cast<uint32_t>(K.Plan->DynamicShared)
                        : C.SharedBytes;
  if (Shared > 48u * 1024 && Code.MaxDynamicShared < static_cast<int>(Shared)) {
    cuFuncSetAttribute(Code.Function,
                       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                       static_cast<int>(Shared));
    Code.MaxDynamicShared = static_cast<int>(Shared);
  }
  uint64_t Ordinal = K.Launches++;
  K.Grid = Shape->first;
  K.Block = Shape->second;
  Current = InFlight{&Code, C.Stream, nullptr};
  if (Ordinal < U->Plan.VerifyLaunches) {
    auto Check = beginCheck(K, Ordinal, C, Cbid, Data.functionParams);
    if (!Check)
      stopOnMismatch(K, Ordinal,
                     "it could not be checked: " + Check.error().message());
    Current.Check = std::move(*Check);
    if (U->Plan.TimeKernels) { // time the tuned code, not the check's run
      uint64_t Now = 0;
      cuptiGetTimestamp(&Now);
      std::lock_guard<std::mutex> T(U->TimedLock);
      if (auto It = U->Timed.find(Data.correlationId); It != U->Timed.end())
        It->second.NotBefore = Now;
    }
  }
  for (const GlobalPair &G : Code.Globals)
    cuMemcpyDtoDAsync(G.Tuned, G.App, G.Size, C.Stream);
  static thread_local CUlaunchConfig Config;
  rewriteLaunch(Cbid, const_cast<void *>(Data.functionParams), Code.Function,
                Shape->first, Shape->second, Shared, Config);
}

void onLaunchExit() {
  if (!Current.Code)
    return;
  InFlight F = std::move(Current);
  Current = InFlight{};
  for (const GlobalPair &G : F.Code->Globals)
    cuMemcpyDtoDAsync(G.App, G.Tuned, G.Size, F.Stream);
  if (F.Check) {
    std::lock_guard<std::mutex> L(U->Lock);
    endCheck(*F.Check);
  }
}

void CUPTIAPI callback(void *, CUpti_CallbackDomain Domain,
                       CUpti_CallbackId Cbid, const void *Data) {
  if (!Data)
    return;
  if (Domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (Cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
      const auto &R = *static_cast<const CUpti_ResourceData *>(Data);
      if (R.resourceDescriptor)
        onModuleLoaded(*static_cast<const CUpti_ModuleResourceData *>(
            R.resourceDescriptor));
    }
    return;
  }
  if (InCallback || Domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  ++InCallback;
  const auto &D = *static_cast<const CUpti_CallbackData *>(Data);
  LaunchCall Probe;
  if (decodeLaunch(Cbid, D.functionParams, Probe)) {
    if (D.callbackSite == CUPTI_API_ENTER)
      onLaunchEnter(Cbid, D);
    else
      onLaunchExit();
  } else if (D.callbackSite == CUPTI_API_EXIT) {
    U->Memory.onApiExit(Cbid, D.functionParams,
                        *static_cast<const CUresult *>(D.functionReturnValue),
                        D.context);
  }
  --InCallback;
}

// --- kernel times ---

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *Buffer, size_t,
                              size_t Valid) {
  {
    std::lock_guard<std::mutex> T(U->TimedLock);
    CUpti_Activity *Record = nullptr;
    while (cuptiActivityGetNextRecord(Buffer, Valid, &Record) ==
           CUPTI_SUCCESS) {
      if (Record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
          Record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
        continue;
      const auto &R = *reinterpret_cast<CUpti_ActivityKernel10 *>(Record);
      auto It = U->Timed.find(R.correlationId);
      if (It == U->Timed.end() || R.start < It->second.NotBefore)
        continue; // not timed, or the verification's run of the original
      TunedKernel &K = *It->second.Kernel;
      K.KernelNs += R.end > R.start ? R.end - R.start : 0;
      ++K.Timed;
      U->Timed.erase(It);
    }
  }
  std::free(Buffer);
}

Error timeKernels() {
  R3_TRY(check(
      cuptiActivityRegisterCallbacks(requestActivityBuffer, bufferCompleted),
      "cuptiActivityRegisterCallbacks"));
  return check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
               "cuptiActivityEnable");
}

Error subscribe() {
  CUpti_SubscriberHandle Subscriber;
  R3_TRY(
      check(cuptiSubscribe(&Subscriber, callback, nullptr), "cuptiSubscribe"));
  std::vector<CUpti_CallbackId> Ids = launchCallbacks();
  if (U->Plan.VerifyLaunches > 0)
    for (CUpti_CallbackId Id : DeviceMemory::callbacks())
      Ids.push_back(Id);
  for (CUpti_CallbackId Id : Ids)
    R3_TRY(check(
        cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_DRIVER_API, Id),
        "cuptiEnableCallback"));
  return check(cuptiEnableCallback(1, Subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                   CUPTI_CBID_RESOURCE_MODULE_LOADED),
               "cuptiEnableCallback");
}

Error start(const char *PlanPath) {
  R3_TRY(moveInto(use::readPlan(PlanPath), U->Plan));
  for (const use::KernelPlan &P : U->Plan.Kernels) {
    auto K = std::make_unique<TunedKernel>();
    K->Plan = &P;
    if (P.Artifact.empty())
      return makeError("kernel '", P.Name, "' has no tuned cubin in the plan");
    R3_TRY(moveInto(readWholeFile(P.Artifact, "tuned cubin"), K->Cubin));
    R3_TRY(moveInto(
        parseGridRule(P.GridRule.empty() ? "keep-threads" : P.GridRule),
        K->Rule));
    U->Kernels.push_back(std::move(K));
  }
  R3_TRY(subscribe());
  if (U->Plan.TimeKernels)
    if (Error E = timeKernels())
      warn("kernel times are not available: " + E.message());
  return Error::success();
}

} // namespace

bool startUse() {
  const char *PlanPath = ::getenv(use::PlanEnv);
  if (!PlanPath || !*PlanPath)
    return false;
  const char *Disable = ::getenv(use::DisableEnv);
  if (Disable && std::strcmp(Disable, "1") == 0) {
    warn(std::string(use::DisableEnv) +
         "=1: the application runs with its own kernels");
    return true;
  }
  U = new User;
  const char *Dir = ::getenv(use::ReportDirEnv);
  U->ReportDir = Dir ? Dir : "";
  if (Error E = start(PlanPath)) {
    warn(E.message() + "; the application runs with its own kernels");
    return true;
  }
  std::atexit(atExit);
  ::pthread_atfork(nullptr, nullptr, atForkChild);
  return true;
}

} // namespace r3::cuda
