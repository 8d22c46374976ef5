// Allocation tracking from driver API callbacks. The parameter structs are
// CUPTI's generated_cuda_meta.h; the _ptsz variants (per-thread default
// stream) have the same layout as the plain ones. Each callback is one flat
// table entry: decode the struct, update the table.
#include "record/cuda/DeviceMemory.h"

#include <cupti.h> // its generated_cuda_meta.h: the parameter structs

namespace r3::cuda {

namespace {
template <typename P> const P &as(const void *Params) {
  return *static_cast<const P *>(Params);
}

uint64_t address(const void *P) { return reinterpret_cast<uintptr_t>(P); }

constexpr uint64_t deviceBit(int Device) {
  return Device >= 0 && Device < 64 ? 1ull << Device : 0;
}

DeviceAllocation inContext(uint64_t Base, uint64_t Size, CUcontext Ctx) {
  return {Base, Size, RegionKind::Device, Reach::Context, Ctx, 0};
}
} // namespace

bool reachable(const DeviceAllocation &A, CUcontext Ctx, int Device) {
  switch (A.Scope) {
  case Reach::Context:
    return A.Context == Ctx;
  case Reach::Devices:
    return (A.Devices & deviceBit(Device)) != 0;
  case Reach::Everywhere:
    return true;
  }
  return false;
}

const std::vector<CUpti_CallbackId> &DeviceMemory::callbacks() {
  static const std::vector<CUpti_CallbackId> Ids = {
      CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemMap,
      CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
      CUPTI_DRIVER_TRACE_CBID_cuMemSetAccess,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
      CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister,
      CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemHostGetDevicePointer_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
      CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister,
  };
  return Ids;
}

void DeviceMemory::add(const DeviceAllocation &A) { Table[A.Base] = A; }

void DeviceMemory::remove(uint64_t Base) { Table.erase(Base); }

std::vector<DeviceAllocation> DeviceMemory::live() const {
  std::lock_guard<std::mutex> L(Lock);
  std::vector<DeviceAllocation> Out;
  for (const auto &[Base, A] : Table)
    Out.push_back(A);
  return Out;
}

std::vector<DeviceAllocation> DeviceMemory::reachableFrom(CUcontext Ctx,
                                                          int Device) const {
  std::vector<DeviceAllocation> Out;
  for (const DeviceAllocation &A : live())
    if (reachable(A, Ctx, Device))
      Out.push_back(A);
  return Out;
}

void DeviceMemory::onApiExit(CUpti_CallbackId Cbid, const void *Params,
                             CUresult Result, CUcontext Ctx) {
  if (Result != CUDA_SUCCESS)
    return;
  std::lock_guard<std::mutex> L(Lock);
  (void)(onPlain(Cbid, Params, Ctx) || onVmm(Cbid, Params) ||
         onHost(Cbid, Params, Ctx));
}

// --- cuMemAlloc and friends: memory of the calling context ---

bool DeviceMemory::onPlain(CUpti_CallbackId Cbid, const void *Params,
                           CUcontext Ctx) {
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
    auto &A = as<cuMemAlloc_v2_params>(Params);
    add(inContext(*A.dptr, A.bytesize, Ctx));
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
    auto &A = as<cuMemAllocPitch_v2_params>(Params);
    add(inContext(*A.dptr, uint64_t(*A.pPitch) * A.Height, Ctx));
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: {
    auto &A = as<cuMemAllocManaged_params>(Params);
    add({*A.dptr, A.bytesize, RegionKind::Managed, Reach::Everywhere});
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
    auto &A = as<cuMemAllocAsync_params>(Params);
    add(inContext(*A.dptr, A.bytesize, Ctx));
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
    auto &A = as<cuMemAllocFromPoolAsync_params>(Params);
    add(inContext(*A.dptr, A.bytesize, Ctx));
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
    remove(as<cuMemFree_v2_params>(Params).dptr);
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
    remove(as<cuMemFreeAsync_params>(Params).dptr);
    return true;
  default:
    return false;
  }
}

// --- VMM: a mapping is a region ---
// The physical allocations (cuMemCreate, cuMemRelease) need no entry: kernels
// address mappings, a mapping keeps its memory alive after cuMemRelease until
// cuMemUnmap, and one handle mapped twice is two regions, as the replay must
// map it (the capture cannot say two addresses alias).

void DeviceMemory::map(uint64_t Va, uint64_t Size) {
  add({Va, Size, RegionKind::Device, Reach::Devices, nullptr, 0});
}

void DeviceMemory::unmap(uint64_t Va, uint64_t Size) {
  auto It = Table.lower_bound(Va);
  while (It != Table.end() && It->first < Va + Size)
    It = Table.erase(It);
}

/// cuMemSetAccess applies to every mapping in the range; the access flags of
/// a device replace what it had (PROT_NONE takes access away).
void DeviceMemory::setAccess(uint64_t Va, uint64_t Size,
                             const CUmemAccessDesc *Desc, size_t Count) {
  for (auto It = Table.lower_bound(Va);
       It != Table.end() && It->first < Va + Size; ++It) {
    DeviceAllocation &A = It->second;
    for (size_t I = 0; Desc && I < Count; ++I) {
      if (Desc[I].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        continue;
      uint64_t Bit = deviceBit(Desc[I].location.id);
      if (Desc[I].flags & CU_MEM_ACCESS_FLAGS_PROT_READ)
        A.Devices |= Bit;
      else
        A.Devices &= ~Bit;
    }
  }
}

bool DeviceMemory::onVmm(CUpti_CallbackId Cbid, const void *Params) {
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
    auto &A = as<cuMemMap_params>(Params);
    map(A.ptr, A.size);
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
    auto &A = as<cuMemUnmap_params>(Params);
    unmap(A.ptr, A.size);
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemSetAccess: {
    auto &A = as<cuMemSetAccess_params>(Params);
    setAccess(A.ptr, A.size, A.desc, A.count);
    return true;
  }
  default:
    return false;
  }
}

// --- pinned host memory: a region at the device address, once it has one ---

void DeviceMemory::pin(uint64_t Host, uint64_t Size, uint64_t DeviceBase,
                       Reach Scope, CUcontext Ctx) {
  Pinned[Host] = {Size, DeviceBase, Scope, Ctx};
  if (DeviceBase)
    add({DeviceBase, Size, RegionKind::HostMapped, Scope, Ctx, 0});
}

void DeviceMemory::unpin(uint64_t Host) {
  auto It = Pinned.find(Host);
  if (It == Pinned.end())
    return;
  if (It->second.DeviceBase)
    remove(It->second.DeviceBase);
  Pinned.erase(It);
}

/// The device address of pinned memory containing Host is Device: the region
/// moves there (a write-combined allocation, or registered memory the device
/// does not see at its host address, has a device address of its own).
void DeviceMemory::mapPinned(uint64_t Host, uint64_t Device) {
  auto It = Pinned.upper_bound(Host);
  if (It == Pinned.begin())
    return;
  --It;
  PinnedHost &P = It->second;
  if (Host >= It->first + P.Size)
    return;
  uint64_t Base = Device - (Host - It->first);
  if (P.DeviceBase == Base)
    return;
  if (P.DeviceBase)
    remove(P.DeviceBase);
  P.DeviceBase = Base;
  add({Base, P.Size, RegionKind::HostMapped, P.Scope, P.Context, 0});
}

bool DeviceMemory::onHost(CUpti_CallbackId Cbid, const void *Params,
                          CUcontext Ctx) {
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2: {
    // Under UVA, reachable from every context at the host address.
    auto &A = as<cuMemAllocHost_v2_params>(Params);
    uint64_t P = address(*A.pp);
    pin(P, A.bytesize, P, Reach::Everywhere, nullptr);
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc: {
    // Likewise whatever the flags, but for write-combined memory, whose
    // device address only cuMemHostGetDevicePointer tells.
    auto &A = as<cuMemHostAlloc_params>(Params);
    uint64_t P = address(*A.pp);
    bool Combined = A.Flags & CU_MEMHOSTALLOC_WRITECOMBINED;
    pin(P, A.bytesize, Combined ? 0 : P, Reach::Everywhere, nullptr);
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister: // the same layout
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2: {
    // Mapped only with DEVICEMAP, for the registering context unless
    // PORTABLE; at the host address where the device can use it (the
    // usual case; cuMemHostGetDevicePointer corrects it otherwise).
    auto &A = as<cuMemHostRegister_v2_params>(Params);
    uint64_t P = address(A.p);
    bool Mapped = A.Flags & CU_MEMHOSTREGISTER_DEVICEMAP;
    bool Portable = A.Flags & CU_MEMHOSTREGISTER_PORTABLE;
    pin(P, A.bytesize, Mapped ? P : 0,
        Portable ? Reach::Everywhere : Reach::Context, Ctx);
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostGetDevicePointer_v2: {
    auto &A = as<cuMemHostGetDevicePointer_v2_params>(Params);
    mapPinned(address(A.p), *A.pdptr);
    return true;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost:
    unpin(address(as<cuMemFreeHost_params>(Params).p));
    return true;
  case CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister:
    unpin(address(as<cuMemHostUnregister_params>(Params).p));
    return true;
  default:
    return false;
  }
}

} // namespace r3::cuda
