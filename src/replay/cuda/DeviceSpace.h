// Device memory at the recorded addresses (the design brief's decision 3):
// each planned span is reserved at its recorded address with
// cuMemAddressReserve, backed by cuMemCreate and mapped read-write, so that
// pointers stored inside the recorded memory stay valid. A range the driver
// will not give at that address is an error naming the regions inside it.
#pragma once

#include "replay/SpacePlan.h"
#include "support/Error.h"

#include <cuda.h>

#include <memory>
#include <vector>

namespace r3::cuda {

class DeviceSpace {
public:
  /// The VMM granularity of Device (2 MiB on current GPUs).
  static Expected<uint64_t> granularity(CUdevice Device);
  /// Reserves and maps every span on Device; undoes what it did on failure.
  static Expected<std::unique_ptr<DeviceSpace>>
  map(const std::vector<PlannedSpan> &Spans, CUdevice Device);
  ~DeviceSpace();
  DeviceSpace(const DeviceSpace &) = delete;
  DeviceSpace &operator=(const DeviceSpace &) = delete;

  uint64_t bytes() const { return Bytes; }

private:
  DeviceSpace() = default;
  Error mapOne(const PlannedSpan &S, CUdevice Device);

  struct Mapping {
    CUdeviceptr Base = 0;
    uint64_t Size = 0;
    CUmemGenericAllocationHandle Handle = 0;
    bool Mapped = false;
  };
  std::vector<Mapping> Mappings;
  uint64_t Bytes = 0;
};

} // namespace r3::cuda
