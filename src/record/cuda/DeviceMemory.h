// The device memory an application holds, as the driver API's allocation
// calls report it to the injection library's callbacks (on API exit, once the
// call succeeded): cuMemAlloc, pitched, stream-ordered and pool allocations,
// managed memory, and their frees. A selected launch snapshots every entry, so
// the table is the replay's picture of what the kernel could have reached.
#pragma once

#include "capture/Capture.h"

#include <cupti.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace r3::cuda {

/// One live allocation: [Base, Base + Size) of the given kind.
struct DeviceAllocation {
  uint64_t Base = 0, Size = 0;
  RegionKind Kind = RegionKind::Device;
};

class DeviceMemory {
public:
  /// Updates the table from a driver API call that returned Result; calls that
  /// are not allocation calls are ignored.
  void onApiExit(CUpti_CallbackId Cbid, const void *Params, CUresult Result);
  /// Every live allocation, sorted by base.
  std::vector<DeviceAllocation> live() const;
  /// The driver callbacks onApiExit understands, to enable them one by one.
  static const std::vector<CUpti_CallbackId> &callbacks();

private:
  void add(uint64_t Base, uint64_t Size, RegionKind Kind);
  void remove(uint64_t Base);
  mutable std::mutex Lock;
  std::map<uint64_t, DeviceAllocation> Table;
};

} // namespace r3::cuda
