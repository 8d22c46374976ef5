// The CUDA replay device. At open: the driver (loaded at run time), the
// primary context of the first visible device (blocking synchronization, so
// that a long kernel does not burn the server's CPU limit), every recorded
// region mapped (DeviceSpace: at its recorded address where the driver gives
// it, relocated where it does not) before anything else allocates device
// memory. Per candidate: its module loaded (the recorded
// cubin or the candidate's), globals bound by name, then for each launch a
// verification run (inputs restored, outputs poisoned when safe), warm-ups
// and timed runs, each preceded by an untimed restore (and an L2 flush when
// asked), timed by CUDA events around the launch alone. A fault poisons the
// context: the result says crashed and that the device is lost, and the
// server exits after sending it.
#include "replay/cuda/CudaDevice.h"

#include "capture/CaptureReader.h"
#include "replay/cuda/CudaApi.h"
#include "replay/cuda/CudaLaunch.h"
#include "replay/cuda/DeviceSpace.h"

#include <chrono>
#include <map>

namespace r3 {

namespace {
using namespace r3::cuda;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point T) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T).count();
}

/// A loaded module, unloaded when it goes.
struct Module {
  CUmodule M = nullptr;
  ~Module() {
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
                                     const RunningFn &Running) override;

private:
  std::vector<SpanRequest> requests() const;
  Error mapMemory();
  Expected<uint32_t> findKernel(const Candidate &C) const;
  Expected<LaunchData *> launch(uint32_t L);
  Expected<CandidateResult> loadModule(const Candidate &C, uint32_t K,
                                       Module &M, CUfunction &F);
  CandidateResult attributes(CUfunction F) const;
  Expected<bool> poisonSafe(const Candidate &C, uint32_t K, uint32_t L);
  Expected<LaunchStatus> runLaunch(const Candidate &C, LaunchData &L,
                                   CUmodule M, CUfunction F, bool Poison,
                                   CandidateResult &Res);
  Expected<CandidateResult> runAll(const Candidate &C, CUmodule M, CUfunction F,
                                   const std::vector<bool> &Poison,
                                   CandidateResult Res);
  Error flushL2();

  std::unique_ptr<CaptureReader> Reader;
  CUdevice Dev = 0;
  CUcontext Ctx = nullptr;
  CUstream Stream = nullptr;
  CUevent Start = nullptr, Stop = nullptr;
  CUdeviceptr L2Scratch = 0;
  uint64_t L2Bytes = 0;
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
             "launch " + std::to_string(L) + ", " + regionLabel(R, I)});
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
    R3_TRY(moveInto(LaunchData::load(*Reader, L, *Space), D));
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
  CandidateResult Ok;
  Ok.Verified = true;
  return Ok;
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

/// One launch of a candidate: the verification run, warm-ups, timed runs.
/// Times go to Res.TimesNs (summed over launches); a failure ends it.
Expected<LaunchStatus> CudaDevice::runLaunch(const Candidate &C, LaunchData &L,
                                             CUmodule M, CUfunction F,
                                             bool Poison,
                                             CandidateResult &Res) {
  std::string Why;
  RegionAddresses At;
  R3_TRY(moveInto(bindRegions(L, M, Why), At));
  if (!Why.empty())
    return LaunchStatus{FailureKind::WrongResult, Why, false, 0};
  LaunchShape Shape{F, C.Grid.value_or(L.info().Grid),
                    C.Block.value_or(L.info().Block),
                    L.info().DynamicSharedBytes};
  if (Shape.SharedBytes > 48 * 1024)
    api().cuFuncSetAttribute(F, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(Shape.SharedBytes));
  auto T = Clock::now();
  R3_TRY(restore(L, At, Stream, Poison));
  Res.RestoreMs += msSince(T);
  LaunchStatus St = launchOnce(L, Shape, Stream, Start, Stop);
  if (St.Failure != FailureKind::None)
    return St;
  VerifyReport V;
  R3_TRY(moveInto(verifyLaunch(L, At, C.Verify), V));
  if (!V.passed())
    return LaunchStatus{
        FailureKind::WrongResult,
        "launch " + std::to_string(L.index()) + ": " + V.message(), false, 0};
  uint32_t Runs = C.Warmup + C.Repetitions;
  Res.TimesNs.resize(C.Repetitions);
  for (uint32_t I = 0; I < Runs; ++I) {
    T = Clock::now();
    R3_TRY(restore(L, At, Stream, false));
    Res.RestoreMs += msSince(T);
    if (C.FlushL2)
      R3_TRY(flushL2());
    St = launchOnce(L, Shape, Stream, Start, Stop);
    if (St.Failure != FailureKind::None)
      return St;
    if (I >= C.Warmup)
      Res.TimesNs[I - C.Warmup] += St.Ns;
  }
  return St;
}

Expected<CandidateResult> CudaDevice::runAll(const Candidate &C, CUmodule M,
                                             CUfunction F,
                                             const std::vector<bool> &Poison,
                                             CandidateResult Res) {
  for (size_t I = 0; I < C.Launches.size(); ++I) {
    LaunchData *L;
    R3_TRY(moveInto(launch(C.Launches[I]), L));
    LaunchStatus St;
    R3_TRY(moveInto(runLaunch(C, *L, M, F, Poison[I], Res), St));
    if (St.Failure != FailureKind::None) {
      CandidateResult Failed = failedResult(St.Failure, St.Message);
      Failed.DeviceLost = St.DeviceLost;
      Failed.Registers = Res.Registers;
      Failed.SharedBytes = Res.SharedBytes;
      return Failed;
    }
  }
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
  LaunchStatus St;
  R3_TRY(moveInto(runLaunch(Probe, *D, M.M, F, true, Scratch), St));
  if (St.DeviceLost)
    return makeError("the recorded kernel '", C.Kernel,
                     "' crashed with its outputs poisoned (", St.Message,
                     "); replay with --poison off");
  PoisonSafe[L] = St.Failure == FailureKind::None;
  return PoisonSafe[L];
}

Expected<CandidateResult> CudaDevice::evaluate(const Candidate &C,
                                               const RunningFn &Running) {
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
  R3_TRY(Running(Info));
  CandidateResult Res = attributes(F);
  R3_TRY(moveInto(runAll(C, M.M, F, Poison, std::move(Res)), Res));
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
