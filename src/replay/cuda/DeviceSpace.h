// Device memory for a replay, at the recorded addresses where the driver
// allows (device memory holds pointers; relocation is the fallback): each planned
// span is reserved with cuMemAddressReserve at its recorded address as a
// hint, backed by cuMemCreate and mapped read-write. The driver honours such
// a hint only inside the address arena it reserved for itself at start-up,
// which lies elsewhere in every process (measured on driver 580), so a span
// usually lands elsewhere; then the replay relocates: every pointer into a
// recorded region, in the parameter buffer and in the recorded memory
// (8-byte aligned words whose value falls inside a recorded region), is
// rewritten to the region's new place before the kernel runs, and the
// recorded post-state is rewritten the same way before it is compared.
#pragma once

#include "replay/SpacePlan.h"
#include "support/Error.h"

#include <cuda.h>

#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace r3::cuda {

class DeviceSpace {
public:
  /// The VMM granularity of Device (2 MiB on current GPUs).
  static Expected<uint64_t> granularity(CUdevice Device);
  /// Reserves and maps every span on Device, at its recorded address where
  /// the driver gives it and elsewhere otherwise (relocated); Regions are the
  /// recorded regions themselves, which pointers are recognised by.
  static Expected<std::unique_ptr<DeviceSpace>>
  map(const std::vector<PlannedSpan> &Spans, CUdevice Device,
      std::vector<std::pair<uint64_t, uint64_t>> Regions);
  ~DeviceSpace();
  DeviceSpace(const DeviceSpace &) = delete;
  DeviceSpace &operator=(const DeviceSpace &) = delete;

  uint64_t bytes() const { return Bytes; }
  /// Where the spans are, and the pointers that follow them (SpacePlan.h).
  const Relocation &moves() const { return Moves; }
  uint64_t translate(uint64_t Recorded) const {
    return Moves.translate(Recorded);
  }
  uint64_t relocate(std::span<uint8_t> Bytes, uint64_t Base) const {
    return Moves.relocate(Bytes, Base);
  }

private:
  DeviceSpace() = default;
  Error mapOne(const PlannedSpan &S, CUdevice Device);

  struct Mapping {
    CUdeviceptr Base = 0; ///< where it is mapped
    uint64_t Size = 0;
    CUmemGenericAllocationHandle Handle = 0;
    bool Mapped = false;
  };
  std::vector<Mapping> Mappings;
  Relocation Moves;
  uint64_t Bytes = 0;
};

} // namespace r3::cuda
