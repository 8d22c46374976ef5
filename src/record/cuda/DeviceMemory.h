// The device memory an application holds, as the driver API's allocation
// calls report it to the injection library's callbacks (on API exit, once the
// call succeeded): cuMemAlloc, pitched, stream-ordered and pool allocations,
// managed memory, VMM mappings (cuMemMap, cuMemSetAccess, cuMemUnmap), pinned
// host memory the device can reach (cuMemAllocHost, cuMemHostAlloc,
// cuMemHostRegister with DEVICEMAP, at the address cuMemHostGetDevicePointer
// gives) and their frees. A selected launch snapshots every entry its context
// can reach, so the table is the replay's picture of what the kernel could
// have read or written.
//
// Reach matters once a process uses several contexts or devices: memory of
// another context is not in the launch's address space, and copying it from
// the launch's context would fail or, worse, record bytes the kernel never
// saw. Plain allocations belong to their context; a VMM mapping is reachable
// from the devices cuMemSetAccess granted (none until then: the kernel would
// fault, and a copy would fail); managed and host-allocated pinned memory are
// reachable from every context (UVA maps pinned host memory everywhere).
#pragma once

#include "capture/Capture.h"

#include <cupti.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace r3::cuda {

/// Which launches can reach an allocation.
enum class Reach {
  Context,   ///< kernels of the allocating context only
  Devices,   ///< kernels on the devices of the mask (VMM access)
  Everywhere ///< every context (managed, UVA-mapped pinned host memory)
};

/// One live allocation: [Base, Base + Size) of the given kind.
struct DeviceAllocation {
  uint64_t Base = 0, Size = 0;
  RegionKind Kind = RegionKind::Device;
  Reach Scope = Reach::Everywhere;
  CUcontext Context = nullptr; ///< Reach::Context: the allocating context
  uint64_t Devices = 0;        ///< Reach::Devices: bit d for device ordinal d
};

/// True when a kernel running in context Ctx on device ordinal Device can
/// reach A.
bool reachable(const DeviceAllocation &A, CUcontext Ctx, int Device);

class DeviceMemory {
public:
  /// Updates the table from a driver API call made in context Ctx that
  /// returned Result; calls that are not allocation calls are ignored.
  void onApiExit(CUpti_CallbackId Cbid, const void *Params, CUresult Result,
                 CUcontext Ctx);
  /// Every live allocation, sorted by base.
  std::vector<DeviceAllocation> live() const;
  /// The live allocations a kernel in Ctx on device Device can reach.
  std::vector<DeviceAllocation> reachableFrom(CUcontext Ctx, int Device) const;
  /// The driver callbacks onApiExit understands, to enable them one by one.
  static const std::vector<CUpti_CallbackId> &callbacks();

private:
  /// Pinned host memory, by host address, and where the device sees it.
  struct PinnedHost {
    uint64_t Size = 0;
    uint64_t DeviceBase = 0; ///< 0 while the device cannot reach it (yet)
    Reach Scope = Reach::Everywhere;
    CUcontext Context = nullptr;
  };

  bool onPlain(CUpti_CallbackId Cbid, const void *Params, CUcontext Ctx);
  bool onVmm(CUpti_CallbackId Cbid, const void *Params);
  bool onHost(CUpti_CallbackId Cbid, const void *Params, CUcontext Ctx);
  void add(const DeviceAllocation &A);
  void remove(uint64_t Base);
  void map(uint64_t Va, uint64_t Size);
  void unmap(uint64_t Va, uint64_t Size);
  void setAccess(uint64_t Va, uint64_t Size, const CUmemAccessDesc *Desc,
                 size_t Count);
  void pin(uint64_t Host, uint64_t Size, uint64_t DeviceBase, Reach Scope,
           CUcontext Ctx);
  void unpin(uint64_t Host);
  void mapPinned(uint64_t Host, uint64_t Device);

  mutable std::mutex Lock;
  std::map<uint64_t, DeviceAllocation> Table; ///< by device base
  std::map<uint64_t, PinnedHost> Pinned;      ///< by host base
};

} // namespace r3::cuda
