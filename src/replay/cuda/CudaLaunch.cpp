// One recorded launch on the GPU (CudaLaunch.h). Verification follows
// Verify.cpp's rules: regions the recorded launch changed are compared with
// the post-state, all others must be left exactly as they were; outputs are
// poisoned over the span of bytes that changed, as the host backend does.
// The comparisons run on the GPU (DeviceVerify.h) against device copies of
// the expected bytes; a region without one is read back and compared here.
#include "replay/cuda/CudaLaunch.h"

#include "replay/cuda/CudaApi.h"

#include <cstring>

namespace r3::cuda {

namespace {
std::pair<uint64_t, uint64_t> changedSpan(const std::vector<uint8_t> &Pre,
                                          const std::vector<uint8_t> &Post) {
  if (Post.size() != Pre.size())
    return {0, 0};
  uint64_t Lo = 0, Hi = Pre.size();
  while (Lo < Hi && Pre[Lo] == Post[Lo])
    ++Lo;
  while (Hi > Lo && Pre[Hi - 1] == Post[Hi - 1])
    --Hi;
  return {Lo, Hi};
}
} // namespace

Expected<std::unique_ptr<LaunchData>> LaunchData::load(const CaptureReader &R,
                                                       uint32_t Launch,
                                                       const DeviceSpace &Space,
                                                       bool Expected) {
  std::unique_ptr<LaunchData> L(new LaunchData);
  L->Index = Launch;
  L->Info = R.launches()[Launch];
  L->Relocated += Space.relocate(L->Info.Params, 0);
  const Api &A = api();
  for (uint32_t I = 0; I < L->Info.Regions.size(); ++I) {
    const RegionInfo &Reg = L->Info.Regions[I];
    L->Address.push_back(
        Reg.Kind == RegionKind::Global ? 0 : Space.translate(Reg.Base));
    L->Pre.emplace_back(Reg.Size);
    R3_TRY(R.readRegion(Launch, I, Phase::Pre, 0, L->Pre.back()));
    L->Relocated += Space.relocate(L->Pre.back(), Reg.Base);
    L->Post.emplace_back();
    if (Reg.Changed) {
      L->Post.back().resize(Reg.Size);
      R3_TRY(R.readRegion(Launch, I, Phase::Post, 0, L->Post.back()));
      Space.relocate(L->Post.back(), Reg.Base);
    }
    L->Changed.push_back(changedSpan(L->Pre.back(), L->Post.back()));
    CUdeviceptr P = 0;
    if (Reg.Size > 0) {
      R3_TRY(check(A.cuMemAlloc(&P, Reg.Size), "cuMemAlloc"));
      L->Pristine.push_back(P);
      R3_TRY(check(A.cuMemcpyHtoD(P, L->Pre.back().data(), Reg.Size),
                   "cuMemcpyHtoD"));
    } else {
      L->Pristine.push_back(0);
    }
    CUdeviceptr E = 0;
    if (Expected && Reg.Changed && L->Post.back().size() == Reg.Size &&
        Reg.Size > 0) {
      // No room is no error: this region is then compared on the host.
      if (A.cuMemAlloc(&E, Reg.Size) != CUDA_SUCCESS)
        E = 0;
      else if (CUresult Rc =
                   A.cuMemcpyHtoD(E, L->Post.back().data(), Reg.Size)) {
        A.cuMemFree(E);
        return check(Rc, "cuMemcpyHtoD");
      }
    }
    L->ExpectedCopy.push_back(E);
  }
  return L;
}

LaunchData::~LaunchData() {
  for (CUdeviceptr P : Pristine)
    if (P)
      api().cuMemFree(P);
  for (CUdeviceptr P : ExpectedCopy)
    if (P)
      api().cuMemFree(P);
}

Expected<RegionAddresses> bindRegions(const LaunchData &L, CUmodule Module,
                                      std::string &Why) {
  RegionAddresses At;
  const auto &Regions = L.info().Regions;
  for (uint32_t I = 0; I < Regions.size(); ++I) {
    const RegionInfo &Reg = Regions[I];
    if (Reg.Kind != RegionKind::Global) {
      At.Address.push_back(L.address(I));
      continue;
    }
    CUdeviceptr P = 0;
    size_t Size = 0;
    CUresult Rc = api().cuModuleGetGlobal(&P, &Size, Module, Reg.Name.c_str());
    if (Rc == CUDA_SUCCESS && Size != Reg.Size && Why.empty())
      Why = "the module's global '" + Reg.Name + "' has " +
            std::to_string(Size) + " bytes, the recorded one " +
            std::to_string(Reg.Size);
    if (Rc != CUDA_SUCCESS && Reg.Changed && Why.empty())
      Why = "the module has no global '" + Reg.Name +
            "', which the recorded launch wrote";
    At.Address.push_back(Rc == CUDA_SUCCESS && Size == Reg.Size ? P : 0);
  }
  return At;
}

Error restore(const LaunchData &L, const RegionAddresses &At, CUstream S,
              bool Poison, bool All) {
  const Api &A = api();
  const auto &Regions = L.info().Regions;
  for (uint32_t I = 0; I < Regions.size(); ++I) {
    CUdeviceptr To = At.Address[I];
    uint64_t Size = Regions[I].Size;
    if (!To || !Size || !L.pristine(I) || (!All && !Regions[I].Changed))
      continue;
    R3_TRY(check(A.cuMemcpyDtoDAsync(To, L.pristine(I), Size, S),
                 "cuMemcpyDtoDAsync"));
    auto [Lo, Hi] = L.changed(I);
    // Globals are never poisoned: kernels accumulate into __device__
    // counters (read-modify-write), which poisoning would turn into a wrong
    // result of the recorded kernel itself.
    if (Poison && Hi > Lo && Regions[I].Kind != RegionKind::Global)
      R3_TRY(check(A.cuMemsetD8Async(To + Lo, 0xff, Hi - Lo, S),
                   "cuMemsetD8Async"));
  }
  for (const RegionAddresses::Reset &R : At.Resets)
    R3_TRY(check(A.cuMemcpyDtoDAsync(R.To, R.From, R.Size, S),
                 "cuMemcpyDtoDAsync"));
  return check(A.cuStreamSynchronize(S), "cuStreamSynchronize");
}

Expected<VerifyReport> verifyLaunch(const LaunchData &L,
                                    const RegionAddresses &At,
                                    const VerifySettings &Settings,
                                    ScanDevice *Scans) {
  const auto &Regions = L.info().Regions;
  if (Scans) {
    std::vector<ScanRegion> Checks;
    for (uint32_t I = 0; I < Regions.size(); ++I) {
      const RegionInfo &Reg = Regions[I];
      if (!At.Address[I] || !Reg.Size)
        continue;
      bool Out = Reg.Changed && L.post(I).size() == Reg.Size;
      Checks.push_back({regionLabel(Reg, I),
                        Out ? RegionRole::Output : RegionRole::Unchanged,
                        Out ? L.post(I) : L.pre(I),
                        Out ? L.expected(I) : L.pristine(I), At.Address[I],
                        Reg.Size});
    }
    return verifyOnDevice(Checks, Settings, *Scans);
  }
  Verifier V(Settings);
  std::vector<uint8_t> Actual;
  for (uint32_t I = 0; I < Regions.size(); ++I) {
    const RegionInfo &Reg = Regions[I];
    if (!At.Address[I] || !Reg.Size)
      continue;
    Actual.resize(Reg.Size);
    R3_TRY(check(api().cuMemcpyDtoH(Actual.data(), At.Address[I], Reg.Size),
                 "cuMemcpyDtoH"));
    bool Out = Reg.Changed && L.post(I).size() == Reg.Size;
    V.checkRegion({regionLabel(Reg, I), Out ? L.post(I) : L.pre(I), Actual,
                   Out ? RegionRole::Output : RegionRole::Unchanged});
  }
  return V.report();
}

LaunchStatus launchOnce(const LaunchData &L, const LaunchShape &Shape,
                        CUstream S, CUevent Start, CUevent Stop) {
  const Api &A = api();
  LaunchStatus St;
  auto Fail = [&](CUresult Rc, const char *Call) {
    St.DeviceLost = isSticky(Rc);
    St.Failure =
        St.DeviceLost ? FailureKind::Crashed : FailureKind::InvalidLaunch;
    St.Message = std::string(St.DeviceLost ? "crashed: " : "") + Call + ": " +
                 resultText(Rc);
    return St;
  };
  std::vector<uint8_t> Params = L.info().Params;
  size_t Size = Params.size();
  void *Extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, Params.data(),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &Size, CU_LAUNCH_PARAM_END};
  if (CUresult Rc = A.cuEventRecord(Start, S))
    return Fail(Rc, "cuEventRecord");
  CUresult Rc = A.cuLaunchKernel(Shape.Function, Shape.Grid[0], Shape.Grid[1],
                                 Shape.Grid[2], Shape.Block[0], Shape.Block[1],
                                 Shape.Block[2], Shape.SharedBytes, S, nullptr,
                                 Size ? Extra : nullptr);
  if (Rc)
    return Fail(Rc, "cuLaunchKernel");
  if ((Rc = A.cuEventRecord(Stop, S)) || (Rc = A.cuEventSynchronize(Stop)))
    return Fail(Rc, "the kernel");
  float Ms = 0;
  if ((Rc = A.cuEventElapsedTime(&Ms, Start, Stop)))
    return Fail(Rc, "cuEventElapsedTime");
  St.Ns = static_cast<uint64_t>(static_cast<double>(Ms) * 1e6);
  return St;
}

} // namespace r3::cuda
