// The CUDA replay device. At open: the driver (loaded at run time), the
// primary context of the first visible device (blocking synchronization, so
// that a long kernel does not burn the server's CPU limit), every recorded
// region mapped (DeviceSpace: at its recorded address where the driver gives
// it, relocated where it does not) before anything else allocates device
// memory. Per candidate: its module loaded (the recorded
// cubin or the candidate's), globals bound by name, then for each launch a
// verification run (inputs restored, outputs poisoned when safe), warm-ups
// and timed runs, each preceded by the same untimed restore and poisoning
// (and an L2 flush when asked), so that no run looks like the verification
// run to the candidate; the outputs of the last run and of one run picked at
// random are verified too (a check copies the memory back, too slow for
// every run). Each run is timed twice: by CUPTI's activity record of the kernel
// (its execution on the GPU, as r3 record timed the application's launches:
// KernelTimer.h) and by CUDA events around the launch (which add the launch
// overhead); the first is the result's time when CUPTI works. The timed runs
// stop early once the median is precise enough (adaptive repetitions). A
// block change gives each launch the grid its rule computes from that
// launch's recorded values. A fault poisons the context: the result says
// crashed and that the device is lost, and the server exits after sending
// it.
#include "replay/cuda/CudaDevice.h"
#include "support/Clock.h"

#include "cubin/CubinSymbols.h"
#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "replay/cuda/CudaApi.h"
#include "replay/cuda/CudaLaunch.h"
#include "replay/cuda/CudaScans.h"
#include "replay/cuda/DeviceSpace.h"
#include "replay/cuda/KernelTimer.h"
#include "replay/Determinism.h"
#include "replay/LaunchRule.h"
#include "replay/Stats.h"

#include <chrono>
#include <map>
#include <random>
#include <set>

namespace r3 {

namespace {
using namespace r3::cuda;
using Clock = std::chrono::steady_clock;

/// The timed runs of a candidate's launches, summed per repetition: the
/// first launch decides how many there are (its rule may stop early), the
/// others take as many.
struct RunTimes {
  RepetitionRule Rule;
  std::vector<uint64_t> Events, Primary;
  bool AllCupti = true;
  /// One launch's runs: event times, and the kernels' own (CUPTI) times or
  /// the event times again when Cupti is false.
  void add(const std::vector<uint64_t> &E, const std::vector<uint64_t> &P,
           bool Cupti) {
    AllCupti &= Cupti;
    if (Events.empty()) {
      Events.assign(E.size(), 0);
      Primary.assign(P.size(), 0);
      Rule = RepetitionRule{0, static_cast<uint32_t>(E.size()), 0};
    }
    for (size_t I = 0; I < E.size() && I < Events.size(); ++I) {
      Events[I] += E[I];
      Primary[I] += P[I];
    }
  }
};

/// A loaded module, unloaded when it goes, with the copies of its own
/// writable globals taken at load (RegionAddresses::Resets).
struct Module {
  CUmodule M = nullptr;
  std::vector<RegionAddresses::Reset> Own;
  std::vector<std::string> OwnNames;
  ~Module() {
    for (const RegionAddresses::Reset &R : Own)
      api().cuMemFree(R.From);
    if (M)
      api().cuModuleUnload(M);
  }
};

class CudaDevice final : public ReplayDevice {
public:
  explicit CudaDevice(std::unique_ptr<CaptureReader> R)
      : Reader(std::move(R)) {}
  Error open();
  Expected<CandidateResult> evaluate(const Candidate &C,
                                     const RunHooks &Hooks) override;
  std::string name() const override { return Name; }

private:
  std::vector<SpanRequest> requests() const;
  Error mapMemory();
  Expected<uint32_t> findKernel(const Candidate &C) const;
  Expected<LaunchData *> launch(uint32_t L);
  Expected<CandidateResult> loadModule(const Candidate &C, uint32_t K,
                                       Module &M, CUfunction &F);
  /// Copies of the candidate module's writable globals that no recorded
  /// region names, restored before every run (RegionAddresses::Resets).
  Error keepOwnGlobals(const std::vector<uint8_t> &Image, Module &M) const;
  CandidateResult attributes(CUfunction F) const;
  Expected<bool> poisonSafe(const Candidate &C, uint32_t K, uint32_t L);
  Expected<LaunchStatus> shapeFor(const Candidate &C, const LaunchData &L,
                                  CUfunction F, LaunchShape &Shape) const;
  Expected<LaunchStatus> runLaunch(const Candidate &C, LaunchData &L,
                                   const Module &M, CUfunction F, bool Poison,
                                   const RunHooks &Hooks, RunTimes &Times,
                                   CandidateResult &Res);
  Expected<LaunchStatus> timedRuns(const Candidate &C, const LaunchData &L,
                                   const RegionAddresses &At,
                                   const LaunchShape &Shape, bool Poison,
                                   const RunHooks &Hooks, RunTimes &Times,
                                   CandidateResult &Res);
  Expected<LaunchStatus> spreadOf(const Candidate &C, LaunchData &L,
                                  CUmodule M, CUfunction F, SpreadReport &S,
                                  bool &Covered);
  Expected<std::optional<CandidateResult>>
  checkDeterminism(const Candidate &C, CUmodule M, CUfunction F,
                   CandidateResult &Res);
  Expected<CandidateResult> runAll(const Candidate &C, const Module &M,
                                   CUfunction F,
                                   const std::vector<bool> &Poison,
                                   const RunHooks &Hooks, CandidateResult Res);
  Error flushL2();

  std::unique_ptr<CaptureReader> Reader;
  std::string Name;
  std::unique_ptr<KernelTimer> Timer; ///< none: events only
  std::string NoTimer;                ///< why there is no CUPTI timer
  /// The verification kernel; none: regions are compared on the host.
  std::unique_ptr<CudaScans> Scans;
  std::string NoScans; ///< why the verification kernel did not load
  CUdevice Dev = 0;
  CUcontext Ctx = nullptr;
  CUstream Stream = nullptr;
  CUevent Start = nullptr, Stop = nullptr;
  CUdeviceptr L2Scratch = 0;
  uint64_t L2Bytes = 0;
  uint32_t Multiprocessors = 0;
  std::unique_ptr<DeviceSpace> Space;
  std::map<uint32_t, std::unique_ptr<LaunchData>> Launches;
  std::map<uint32_t, bool> PoisonSafe; ///< by launch
};

Error CudaDevice::open() {
  const Api *A;
  R3_TRY(moveInto(loadApi(), A));
  R3_TRY(check(A->cuInit(0), "cuInit"));
  int Count = 0;
  R3_TRY(check(A->cuDeviceGetCount(&Count), "cuDeviceGetCount"));
  if (Count == 0)
    return Error::make("no CUDA device is visible to the replay server");
  R3_TRY(check(A->cuDeviceGet(&Dev, 0), "cuDeviceGet"));
  R3_TRY(check(A->cuDevicePrimaryCtxSetFlags(Dev, CU_CTX_SCHED_BLOCKING_SYNC),
               "cuDevicePrimaryCtxSetFlags"));
  R3_TRY(check(A->cuDevicePrimaryCtxRetain(&Ctx, Dev),
               "cuDevicePrimaryCtxRetain"));
  R3_TRY(check(A->cuCtxSetCurrent(Ctx), "cuCtxSetCurrent"));
  // Before anything else takes device addresses.
  R3_TRY(mapMemory());
  R3_TRY(check(A->cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING),
               "cuStreamCreate"));
  R3_TRY(check(A->cuEventCreate(&Start, CU_EVENT_DEFAULT), "cuEventCreate"));
  R3_TRY(
      check(A->cuEventCreate(&Stop, CU_EVENT_BLOCKING_SYNC), "cuEventCreate"));
  int L2 = 0;
  R3_TRY(check(
      A->cuDeviceGetAttribute(&L2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Dev),
      "cuDeviceGetAttribute"));
  L2Bytes = static_cast<uint64_t>(L2) * 2;
  int Sms = 0;
  R3_TRY(check(A->cuDeviceGetAttribute(
                   &Sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, Dev),
               "cuDeviceGetAttribute"));
  Multiprocessors = static_cast<uint32_t>(Sms);
  // R3_REPLAY_VERIFY=host compares on the host, as before the GPU did it
  // (to measure one against the other); a kernel that does not load falls
  // back to it too.
  const char *Where = std::getenv("R3_REPLAY_VERIFY");
  if (!Where || std::string(Where) != "host") {
    auto S = CudaScans::open(Stream, Multiprocessors);
    if (S)
      Scans = std::move(*S);
    else
      NoScans = S.takeError().message();
  }
  char Buf[256] = {};
  if (A->cuDeviceGetName(Buf, sizeof Buf - 1, Dev) == CUDA_SUCCESS)
    Name = Buf;
  auto T = KernelTimer::start();
  if (T)
    Timer = std::move(*T);
  else
    NoTimer = T.takeError().message();
  return Error::success();
}

std::vector<SpanRequest> CudaDevice::requests() const {
  std::vector<SpanRequest> Requests;
  const auto &Ls = Reader->launches();
  for (uint32_t L = 0; L < Ls.size(); ++L)
    for (uint32_t I = 0; I < Ls[L].Regions.size(); ++I) {
      const RegionInfo &R = Ls[L].Regions[I];
      if (R.Kind != RegionKind::Global)
        Requests.push_back(
            {R.Base, R.Size,
             shownLaunchName(viewOf(*Reader), L) + ", " + regionLabel(R, I)});
    }
  return Requests;
}

Error CudaDevice::mapMemory() {
  uint64_t G;
  R3_TRY(moveInto(DeviceSpace::granularity(Dev), G));
  std::vector<SpanRequest> Requests = requests();
  std::vector<std::pair<uint64_t, uint64_t>> Regions;
  for (const SpanRequest &R : Requests)
    Regions.push_back({R.Base, R.Base + R.Size});
  R3_TRY(moveInto(DeviceSpace::map(planSpans(std::move(Requests), G), Dev,
                                   std::move(Regions)),
                  Space));
  return Error::success();
}

Expected<uint32_t> CudaDevice::findKernel(const Candidate &C) const {
  const auto &Kernels = Reader->kernels();
  for (uint32_t K = 0; K < Kernels.size(); ++K)
    if (Kernels[K].Name == C.Kernel)
      return K;
  return makeError("the capture has no kernel '", C.Kernel, "'");
}

Expected<LaunchData *> CudaDevice::launch(uint32_t L) {
  auto It = Launches.find(L);
  if (It == Launches.end()) {
    std::unique_ptr<LaunchData> D;
    R3_TRY(moveInto(LaunchData::load(*Reader, L, *Space, Scans != nullptr), D));
    It = Launches.emplace(L, std::move(D)).first;
  }
  return It->second.get();
}

/// Loads the candidate's code; a module the driver rejects is a compile
/// error (the result, with Verified false), success a result with Verified.
Expected<CandidateResult> CudaDevice::loadModule(const Candidate &C, uint32_t K,
                                                 Module &M, CUfunction &F) {
  std::vector<uint8_t> Image = C.Image;
  if (C.Code == CodeKind::Recorded)
    R3_TRY(moveInto(Reader->readModule(Reader->kernels()[K].Module), Image));
  if (C.Code == CodeKind::Bitcode)
    return failedResult(FailureKind::CompileError,
                        "LLVM bitcode cannot run on the CUDA backend");
  // PTX (text) must end in a NUL for the driver.
  if (!Image.empty() && Image[0] != 0x7f && Image.back() != 0)
    Image.push_back(0);
  char Log[8192] = {};
  CUjit_option Opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Vals[] = {Log, reinterpret_cast<void *>(sizeof(Log))};
  CUresult Rc = api().cuModuleLoadDataEx(&M.M, Image.data(), 2, Opts, Vals);
  if (Rc == CUDA_ERROR_NO_BINARY_FOR_GPU || Rc == CUDA_ERROR_INVALID_IMAGE ||
      Rc == CUDA_ERROR_INVALID_PTX ||
      Rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
      Rc == CUDA_ERROR_INVALID_SOURCE ||
      Rc == CUDA_ERROR_SHARED_OBJECT_INIT_FAILED)
    return failedResult(FailureKind::CompileError,
                        "the driver rejects the module: " + resultText(Rc) +
                            (Log[0] ? std::string(": ") + Log : ""));
  R3_TRY(check(Rc, "cuModuleLoadDataEx"));
  Rc = api().cuModuleGetFunction(&F, M.M, C.Kernel.c_str());
  if (Rc == CUDA_ERROR_NOT_FOUND)
    return failedResult(FailureKind::CompileError,
                        "the module has no kernel '" + C.Kernel + "'");
  R3_TRY(check(Rc, "cuModuleGetFunction"));
  if (C.Code != CodeKind::Recorded)
    R3_TRY(keepOwnGlobals(Image, M));
  CandidateResult Ok;
  Ok.Verified = true;
  return Ok;
}

Error CudaDevice::keepOwnGlobals(const std::vector<uint8_t> &Image,
                                 Module &M) const {
  if (Image.empty() || Image[0] != 0x7f) // PTX: no symbol table to read
    return Error::success();
  auto Syms = readCubinSymbols(Image);
  if (!Syms)
    return Error::success(); // the driver loaded it; nothing to add
  std::set<std::string> Recorded;
  for (const LaunchInfo &L : Reader->launches())
    for (const RegionInfo &R : L.Regions)
      if (R.Kind == RegionKind::Global)
        Recorded.insert(R.Name);
  for (const CubinGlobal &G : Syms->Globals) {
    if (G.Space != GlobalSpace::Device || Recorded.count(G.Name))
      continue;
    RegionAddresses::Reset R;
    if (api().cuModuleGetGlobal(&R.To, &R.Size, M.M, G.Name.c_str()) !=
            CUDA_SUCCESS ||
        R.Size == 0)
      continue;
    R3_TRY(check(api().cuMemAlloc(&R.From, R.Size), "cuMemAlloc"));
    M.Own.push_back(R);
    M.OwnNames.push_back(G.Name);
    R3_TRY(check(api().cuMemcpyDtoDAsync(R.From, R.To, R.Size, Stream),
                 "cuMemcpyDtoDAsync"));
    R3_TRY(check(api().cuStreamSynchronize(Stream), "cuStreamSynchronize"));
  }
  return Error::success();
}

CandidateResult CudaDevice::attributes(CUfunction F) const {
  CandidateResult R;
  auto Get = [&](CUfunction_attribute A) -> std::optional<int64_t> {
    int V = 0;
    if (api().cuFuncGetAttribute(&V, A, F) != CUDA_SUCCESS)
      return std::nullopt;
    return V;
  };
  R.Registers = Get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  R.SharedBytes = Get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  return R;
}

Error CudaDevice::flushL2() {
  const Api &A = api();
  if (!L2Scratch && L2Bytes)
    R3_TRY(check(A.cuMemAlloc(&L2Scratch, L2Bytes), "cuMemAlloc"));
  if (!L2Scratch)
    return Error::success();
  return check(A.cuMemsetD8Async(L2Scratch, 0x5a, L2Bytes, Stream),
               "cuMemsetD8Async");
}

/// The shape launch L runs with: the candidate's block with the grid its
/// rule gives for L, its dynamic shared memory and cache preference. A rule
/// that cannot give a grid, or a shape the function cannot take, is an
/// invalid launch (the status says why).
Expected<LaunchStatus> CudaDevice::shapeFor(const Candidate &C,
                                            const LaunchData &L, CUfunction F,
                                            LaunchShape &Shape) const {
  const LaunchInfo &Rec = Reader->launches()[L.index()];
  Shape = LaunchShape{F, C.Grid.value_or(Rec.Grid), C.Block.value_or(Rec.Block),
                      C.DynamicShared.value_or(Rec.DynamicSharedBytes)};
  if (C.Block && !C.Grid) {
    auto Rule = parseGridRule(C.GridRule.empty() ? "keep-threads" : C.GridRule);
    LaunchValues V{Rec.Grid, Rec.Block, *C.Block,
                   paramValues(Rec, Reader->kernels()[Rec.Kernel],
                               C.ParamNames)};
    auto G = Rule ? applyGridRule(*Rule, V) : Expected<Dim3>(Rule.takeError());
    if (!G)
      return LaunchStatus{FailureKind::InvalidLaunch,
                          "launch " + std::to_string(L.info().Ordinal) +
                              ": the grid rule: " + G.takeError().message(),
                          false, 0};
    Shape.Grid = *G;
  }
  if (C.GridPerSm)
    Shape.Grid[0] = C.GridPerSm * std::max(1u, Multiprocessors);
  if (Shape.SharedBytes > 48 * 1024)
    api().cuFuncSetAttribute(F, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(Shape.SharedBytes));
  static const CUfunc_cache Caches[] = {
      CU_FUNC_CACHE_PREFER_NONE, CU_FUNC_CACHE_PREFER_SHARED,
      CU_FUNC_CACHE_PREFER_L1, CU_FUNC_CACHE_PREFER_EQUAL};
  if (C.Cache != CachePreference::None)
    R3_TRY(check(api().cuFuncSetCacheConfig(F, Caches[int(C.Cache)]),
                 "cuFuncSetCacheConfig"));
  return LaunchStatus{};
}

/// One launch of a candidate: the verification run, warm-ups, timed runs.
/// Times go to Res (summed over launches); a failure ends it.
Expected<LaunchStatus> CudaDevice::runLaunch(const Candidate &C, LaunchData &L,
                                             const Module &M, CUfunction F,
                                             bool Poison, const RunHooks &Hooks,
                                             RunTimes &Times,
                                             CandidateResult &Res) {
  std::string Why;
  RegionAddresses At;
  R3_TRY(moveInto(bindRegions(L, M.M, Why), At));
  if (!Why.empty())
    return LaunchStatus{FailureKind::WrongResult, Why, false, 0};
  At.Resets = M.Own;
  LaunchShape Shape;
  LaunchStatus St;
  R3_TRY(moveInto(shapeFor(C, L, F, Shape), St));
  if (St.Failure != FailureKind::None)
    return St;
  if (Hooks.Tick)
    Hooks.Tick();
  auto T = Clock::now();
  R3_TRY(restore(L, At, Stream, Poison, true));
  Res.RestoreMs += msSince(T);
  St = launchOnce(L, Shape, Stream, Start, Stop);
  if (St.Failure != FailureKind::None)
    return St;
  VerifyReport V;
  T = Clock::now();
  R3_TRY(moveInto(verifyLaunch(L, At, C.Verify, Scans.get()), V));
  Res.VerifyMs += msSince(T);
  if (!V.passed())
    return LaunchStatus{FailureKind::WrongResult,
                        "launch " + std::to_string(L.info().Ordinal) + ": " +
                            V.message(),
                        false, 0};
  return timedRuns(C, L, At, Shape, Poison, Hooks, Times, Res);
}

/// The check of run Index after the verification run: a wrong result when
/// its outputs differ from the recording.
Expected<LaunchStatus> checkLaterRun(const Candidate &C, const LaunchData &L,
                                     const RegionAddresses &At, uint32_t Index,
                                     ScanDevice *Scans) {
  VerifyReport V;
  R3_TRY(moveInto(verifyLaunch(L, At, C.Verify, Scans), V));
  if (V.passed())
    return LaunchStatus{};
  return LaunchStatus{
      FailureKind::WrongResult,
      laterRunMessage(L.info().Ordinal, runName(Index, C.Warmup),
                      "the outputs of the last run and of one run picked at "
                      "random are checked",
                      V),
      false, 0};
}

/// Which run after the verification run is checked besides the last one:
/// any of the warm-ups and the most timed runs there can be, so that a
/// candidate cannot know which.
uint32_t sampledRun(const Candidate &C, uint32_t MaxTimed) {
  static std::mt19937_64 Random{std::random_device{}()};
  uint64_t Runs = uint64_t(C.Warmup) + MaxTimed;
  return Runs ? static_cast<uint32_t>(Random() % Runs) : 0;
}

/// The warm-ups and timed runs of one launch, each after an untimed restore.
/// Times.Rule says how many timed runs; an adaptive rule is asked at
/// checkpoints (its minimum, then every quarter more), where CUPTI's records
/// are flushed, since a flush per run would cost more than it saves.
Expected<LaunchStatus> CudaDevice::timedRuns(const Candidate &C,
                                             const LaunchData &L,
                                             const RegionAddresses &At,
                                             const LaunchShape &Shape,
                                             bool Poison,
                                             const RunHooks &Hooks,
                                             RunTimes &Times,
                                             CandidateResult &Res) {
  LaunchStatus St;
  std::vector<uint64_t> Events;
  std::optional<std::vector<uint64_t>> Kernel;
  bool UseCupti = Timer != nullptr;
  const RepetitionRule &Rule = Times.Rule;
  bool Adaptive = Rule.Min > 0 && Rule.Min < Rule.Max;
  size_t NextCheck = std::max<size_t>(Rule.Min, 6);
  uint32_t Sample = sampledRun(C, Rule.Max), Runs = 0;
  auto KernelTimes = [&]() -> Error {
    if (UseCupti && (!Kernel || Kernel->size() != Events.size())) {
      R3_TRY(moveInto(Timer->durations(Events.size()), Kernel));
      UseCupti = Kernel.has_value();
    }
    return Error::success();
  };
  for (uint32_t I = 0;; ++I) {
    if (I >= C.Warmup && Events.size() >= Rule.Max)
      break;
    if (I >= C.Warmup && Adaptive && Events.size() >= NextCheck) {
      R3_TRY(KernelTimes());
      if (Rule.enough(UseCupti ? *Kernel : Events))
        break;
      NextCheck = Events.size() + std::max<size_t>(2, Events.size() / 4);
    }
    if (Hooks.Tick)
      Hooks.Tick();
    auto T = Clock::now();
    // Verified on the GPU, a run restores only what the recorded launch
    // wrote: the checks compare every other region to its recording.
    R3_TRY(restore(L, At, Stream, Poison, Scans == nullptr));
    Res.RestoreMs += msSince(T);
    if (C.FlushL2)
      R3_TRY(flushL2());
    if (UseCupti && I == C.Warmup)
      R3_TRY(Timer->clear());
    St = launchOnce(L, Shape, Stream, Start, Stop);
    if (St.Failure != FailureKind::None)
      return St;
    if (I >= C.Warmup)
      Events.push_back(St.Ns);
    Runs = I + 1;
    if (I == Sample) {
      T = Clock::now();
      R3_TRY(moveInto(checkLaterRun(C, L, At, I, Scans.get()), St));
      Res.VerifyMs += msSince(T);
    }
    if (St.Failure != FailureKind::None)
      return St;
  }
  if (Runs && Runs - 1 != Sample) {
    auto T = Clock::now();
    R3_TRY(moveInto(checkLaterRun(C, L, At, Runs - 1, Scans.get()), St));
    Res.VerifyMs += msSince(T);
  }
  if (St.Failure != FailureKind::None)
    return St;
  R3_TRY(KernelTimes());
  Times.add(Events, UseCupti ? *Kernel : Events, UseCupti);
  return St;
}

/// Runs launch L of the candidate C.DeterminismRuns times (inputs restored,
/// nothing poisoned) and adds how each run's outputs differ from the
/// recording to S; Covered stays true while every run passes C.Verify.
Expected<LaunchStatus> CudaDevice::spreadOf(const Candidate &C, LaunchData &L,
                                            CUmodule M, CUfunction F,
                                            SpreadReport &S, bool &Covered) {
  std::string Why;
  RegionAddresses At;
  R3_TRY(moveInto(bindRegions(L, M, Why), At));
  LaunchShape Shape;
  LaunchStatus St;
  R3_TRY(moveInto(shapeFor(C, L, F, Shape), St));
  if (!Why.empty() || St.Failure != FailureKind::None)
    return St;
  const auto &Regions = L.info().Regions;
  std::map<uint32_t, RegionSpread> Spread;
  std::vector<uint8_t> Got;
  for (uint32_t Run = 0; Run < C.DeterminismRuns; ++Run) {
    R3_TRY(restore(L, At, Stream, false, true));
    St = launchOnce(L, Shape, Stream, Start, Stop);
    if (St.Failure != FailureKind::None)
      return St;
    for (uint32_t I = 0; I < Regions.size(); ++I) {
      if (!Regions[I].Changed || L.post(I).size() != Regions[I].Size ||
          !At.Address[I])
        continue;
      Got.resize(Regions[I].Size);
      R3_TRY(check(api().cuMemcpyDtoH(Got.data(), At.Address[I], Got.size()),
                   "cuMemcpyDtoH"));
      RegionSpread &R = Spread[I];
      R.Label = "launch " + std::to_string(L.info().Ordinal) + ", " +
                regionLabel(Regions[I], I);
      R.add(L.post(I), Got);
    }
    VerifyReport V;
    R3_TRY(moveInto(verifyLaunch(L, At, C.Verify, Scans.get()), V));
    Covered &= V.passed();
  }
  for (auto &[I, R] : Spread)
    if (R.Differing)
      S.Regions.push_back(R);
  S.Runs = C.DeterminismRuns;
  return St;
}

/// The determinism check before a candidate's runs: a finding goes into
/// Res; outputs that differ beyond the verification settings end the
/// evaluation as a wrong result (the returned result).
Expected<std::optional<CandidateResult>>
CudaDevice::checkDeterminism(const Candidate &C, CUmodule M, CUfunction F,
                             CandidateResult &Res) {
  SpreadReport S;
  bool Covered = true;
  for (uint32_t Launch : C.Launches) {
    LaunchData *L;
    R3_TRY(moveInto(launch(Launch), L));
    LaunchStatus St;
    R3_TRY(moveInto(spreadOf(C, *L, M, F, S, Covered), St));
    if (St.Failure != FailureKind::None) {
      CandidateResult Failed = failedResult(St.Failure, St.Message);
      Failed.DeviceLost = St.DeviceLost;
      return std::optional<CandidateResult>(std::move(Failed));
    }
  }
  if (S.deterministic())
    return std::optional<CandidateResult>();
  Res.Nondeterminism = S.message() + "; a tolerance that covers it: " +
                       S.proposal();
  Res.NondeterminismCovered = Covered;
  if (Covered)
    return std::optional<CandidateResult>();
  CandidateResult Failed = failedResult(
      FailureKind::WrongResult,
      "the recorded kernel is not deterministic: " + Res.Nondeterminism);
  Failed.Nondeterminism = Res.Nondeterminism;
  return std::optional<CandidateResult>(std::move(Failed));
}

Expected<CandidateResult>
CudaDevice::runAll(const Candidate &C, const Module &M, CUfunction F,
                   const std::vector<bool> &Poison, const RunHooks &Hooks,
                   CandidateResult Res) {
  RunTimes Times{RepetitionRule{C.MinRepetitions, C.Repetitions, C.TargetCi}};
  auto Begin = Clock::now();
  for (size_t I = 0; I < C.Launches.size(); ++I) {
    LaunchData *L;
    R3_TRY(moveInto(launch(C.Launches[I]), L));
    LaunchStatus St;
    R3_TRY(moveInto(
        runLaunch(C, *L, M, F, Poison[I], Hooks, Times, Res), St));
    if (St.Failure != FailureKind::None) {
      CandidateResult Failed = failedResult(St.Failure, St.Message);
      Failed.DeviceLost = St.DeviceLost;
      Failed.Registers = Res.Registers;
      Failed.SharedBytes = Res.SharedBytes;
      Failed.BusyMs = msSince(Begin);
      return Failed;
    }
  }
  Res.BusyMs = msSince(Begin);
  Res.TimesNs = Times.Primary;
  Res.EventTimesNs = Times.Events;
  Res.Timer = Times.AllCupti && Timer ? "cupti" : "events";
  if (!Timer && !NoTimer.empty())
    Res.Message = "timed with events: " + NoTimer;
  if (!Scans && !NoScans.empty())
    Res.Message += (Res.Message.empty() ? "" : "; ") +
                   std::string("verified on the host: ") + NoScans;
  Res.Verified = true;
  return Res;
}

/// Auto: poison a launch's outputs when the recorded kernel still verifies
/// with them poisoned (a kernel that reads its outputs does not).
Expected<bool> CudaDevice::poisonSafe(const Candidate &C, uint32_t K,
                                      uint32_t L) {
  if (C.Verify.Poison != PoisonMode::Auto)
    return C.Verify.Poison == PoisonMode::On;
  if (auto It = PoisonSafe.find(L); It != PoisonSafe.end())
    return It->second;
  Candidate Probe = C;
  Probe.Code = CodeKind::Recorded;
  Probe.Image.clear();
  Probe.Grid.reset();
  Probe.Block.reset();
  Probe.Warmup = 0;
  Probe.Repetitions = 0;
  Probe.MinRepetitions = 0;
  Module M;
  CUfunction F = nullptr;
  CandidateResult Loaded;
  R3_TRY(moveInto(loadModule(Probe, K, M, F), Loaded));
  if (!Loaded.Verified)
    return makeError("the recorded module of '", C.Kernel,
                     "' does not load: ", Loaded.Message);
  LaunchData *D;
  R3_TRY(moveInto(launch(L), D));
  CandidateResult Scratch;
  RunTimes Times{RepetitionRule{0, 0, 0}};
  LaunchStatus St;
  R3_TRY(moveInto(runLaunch(Probe, *D, M, F, true, RunHooks{}, Times,
                            Scratch),
                  St));
  if (St.DeviceLost)
    return makeError("the recorded kernel '", C.Kernel,
                     "' crashed with its outputs poisoned (", St.Message,
                     "); replay with --poison off");
  PoisonSafe[L] = St.Failure == FailureKind::None;
  return PoisonSafe[L];
}

Expected<CandidateResult> CudaDevice::evaluate(const Candidate &C,
                                               const RunHooks &Hooks) {
  uint32_t K;
  R3_TRY(moveInto(findKernel(C), K));
  if (C.Launches.empty())
    return makeError("the candidate for '", C.Kernel, "' names no launch");
  for (uint32_t L : C.Launches)
    if (L >= Reader->launches().size() || Reader->launches()[L].Kernel != K)
      return makeError("launch ", L, " is not a launch of kernel '", C.Kernel,
                       "' in the capture");
  std::vector<bool> Poison;
  for (uint32_t L : C.Launches) {
    bool P = false;
    R3_TRY(moveInto(poisonSafe(C, K, L), P));
    Poison.push_back(P);
  }
  auto T = Clock::now();
  Module M;
  CUfunction F = nullptr;
  CandidateResult Loaded;
  R3_TRY(moveInto(loadModule(C, K, M, F), Loaded));
  double LoadMs = msSince(T);
  CompiledInfo Info{LoadMs, C.Pipeline, C.CodegenOpt < 0 ? 0 : C.CodegenOpt,
                    std::find(Poison.begin(), Poison.end(), false) ==
                        Poison.end()};
  auto Described = [&](CandidateResult R) {
    R.LoadMs = LoadMs;
    R.Pipeline = Info.Pipeline;
    R.CodegenOpt = Info.CodegenOpt;
    R.Poisoned = Info.Poisoned;
    return R;
  };
  if (!Loaded.Verified)
    return Described(std::move(Loaded));
  R3_TRY(Hooks.Running(Info));
  CandidateResult Res = attributes(F);
  if (C.DeterminismRuns > 0) {
    std::optional<CandidateResult> Failed;
    R3_TRY(moveInto(checkDeterminism(C, M.M, F, Res), Failed));
    if (Failed)
      return Described(std::move(*Failed));
  }
  std::string Finding = Res.Nondeterminism;
  bool Covered = Res.NondeterminismCovered;
  R3_TRY(moveInto(runAll(C, M, F, Poison, Hooks, std::move(Res)), Res));
  Res.Nondeterminism = Finding;
  Res.NondeterminismCovered = Covered;
  return Described(std::move(Res));
}
} // namespace

Expected<std::unique_ptr<ReplayDevice>>
openCudaDevice(std::unique_ptr<CaptureReader> R) {
  std::string Path = R->path();
  auto D = std::make_unique<CudaDevice>(std::move(R));
  if (Error E = D->open())
    return std::move(E).context(Path);
  return std::unique_ptr<ReplayDevice>(std::move(D));
}

} // namespace r3
