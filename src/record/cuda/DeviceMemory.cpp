// Allocation tracking from driver API callbacks. The parameter structs are
// CUPTI's generated_cuda_meta.h; the _ptsz variants (per-thread default
// stream) have the same layout as the plain ones.
#include "record/cuda/DeviceMemory.h"

#include <cupti.h> // its generated_cuda_meta.h: the parameter structs

namespace r3::cuda {

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
  };
  return Ids;
}

void DeviceMemory::add(uint64_t Base, uint64_t Size, RegionKind Kind) {
  std::lock_guard<std::mutex> L(Lock);
  Table[Base] = {Base, Size, Kind};
}

void DeviceMemory::remove(uint64_t Base) {
  std::lock_guard<std::mutex> L(Lock);
  Table.erase(Base);
}

std::vector<DeviceAllocation> DeviceMemory::live() const {
  std::lock_guard<std::mutex> L(Lock);
  std::vector<DeviceAllocation> Out;
  for (const auto &[Base, A] : Table)
    Out.push_back(A);
  return Out;
}

template <typename P> const P &as(const void *Params) {
  return *static_cast<const P *>(Params);
}

void DeviceMemory::onApiExit(CUpti_CallbackId Cbid, const void *Params,
                             CUresult Result) {
  if (Result != CUDA_SUCCESS)
    return;
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
    auto &A = as<cuMemAlloc_v2_params>(Params);
    return add(*A.dptr, A.bytesize, RegionKind::Device);
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
    auto &A = as<cuMemAllocPitch_v2_params>(Params);
    return add(*A.dptr, uint64_t(*A.pPitch) * A.Height, RegionKind::Device);
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: {
    auto &A = as<cuMemAllocManaged_params>(Params);
    return add(*A.dptr, A.bytesize, RegionKind::Managed);
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
    auto &A = as<cuMemAllocAsync_params>(Params);
    return add(*A.dptr, A.bytesize, RegionKind::Device);
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
    auto &A = as<cuMemAllocFromPoolAsync_params>(Params);
    return add(*A.dptr, A.bytesize, RegionKind::Device);
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
    return remove(as<cuMemFree_v2_params>(Params).dptr);
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
    return remove(as<cuMemFreeAsync_params>(Params).dptr);
  default:
    return;
  }
}

} // namespace r3::cuda
