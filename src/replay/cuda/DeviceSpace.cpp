// Reserving and mapping device memory at the recorded addresses
// (DeviceSpace.h).
#include "replay/cuda/DeviceSpace.h"

#include "replay/cuda/CudaApi.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace r3::cuda {

namespace {
CUmemAllocationProp deviceProp(CUdevice Device) {
  CUmemAllocationProp P{};
  P.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  P.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  P.location.id = Device;
  return P;
}

std::string hex(uint64_t V) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%llx", static_cast<unsigned long long>(V));
  return Buf;
}

std::string describe(const PlannedSpan &S) {
  std::string What = S.Labels.empty() ? std::string("?") : S.Labels.front();
  if (S.Labels.size() > 1)
    What += " and " + std::to_string(S.Labels.size() - 1) + " more";
  return "device addresses " + hex(S.Base) + "-" + hex(S.Base + S.Size) + " (" +
         What + ")";
}
} // namespace

Expected<uint64_t> DeviceSpace::granularity(CUdevice Device) {
  CUmemAllocationProp P = deviceProp(Device);
  size_t G = 0;
  R3_TRY(check(api().cuMemGetAllocationGranularity(
                   &G, &P, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
               "cuMemGetAllocationGranularity"));
  return static_cast<uint64_t>(G);
}

Error DeviceSpace::mapOne(const PlannedSpan &S, CUdevice Device) {
  const Api &A = api();
  Mapping M;
  M.Size = S.Size;
  CUdeviceptr Got = 0;
  if (Error E = check(A.cuMemAddressReserve(&Got, S.Size, 0, S.Base, 0),
                      "cuMemAddressReserve"))
    return makeError("cannot reserve ", describe(S), ": ", E.message());
  Moves.addSpan(S.Base, Got, S.Size);
  M.Base = Got;
  Mappings.push_back(M);
  Mapping &Back = Mappings.back();
  CUmemAllocationProp P = deviceProp(Device);
  if (Error E =
          check(A.cuMemCreate(&Back.Handle, S.Size, &P, 0), "cuMemCreate"))
    return makeError("cannot back ", describe(S), " (", formatBytes(S.Size),
                     "): ", E.message());
  R3_TRY(check(A.cuMemMap(Got, S.Size, 0, Back.Handle, 0), "cuMemMap"));
  Back.Mapped = true;
  CUmemAccessDesc Access{};
  Access.location = P.location;
  Access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  R3_TRY(check(A.cuMemSetAccess(Got, S.Size, &Access, 1), "cuMemSetAccess"));
  Bytes += S.Size;
  return Error::success();
}

Expected<std::unique_ptr<DeviceSpace>>
DeviceSpace::map(const std::vector<PlannedSpan> &Spans, CUdevice Device,
                 std::vector<std::pair<uint64_t, uint64_t>> Regions) {
  std::unique_ptr<DeviceSpace> D(new DeviceSpace);
  for (const PlannedSpan &S : Spans)
    R3_TRY(D->mapOne(S, Device));
  D->Moves.setRegions(std::move(Regions));
  return D;
}

DeviceSpace::~DeviceSpace() {
  const Api &A = api();
  for (const Mapping &M : Mappings) {
    if (M.Mapped)
      A.cuMemUnmap(M.Base, M.Size);
    if (M.Handle)
      A.cuMemRelease(M.Handle);
    A.cuMemAddressFree(M.Base, M.Size);
  }
}

} // namespace r3::cuda
