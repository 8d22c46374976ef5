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

/// Host placeholders (PROT_NONE mappings) over the recorded ranges, taken
/// before the driver starts: under unified addressing device and host
/// addresses share one space, and the driver's start-up and this process's
/// libraries would otherwise settle anywhere, the recorded ranges included.
class AddressHold {
public:
  /// Holds every span (planned with PreInitGranularity); an error naming the
  /// span when something of this process already lies there.
  static Expected<std::unique_ptr<AddressHold>>
  hold(const std::vector<PlannedSpan> &Spans);
  ~AddressHold();
  /// Gives back the held parts of [Base, Base + Size), just before the driver
  /// reserves it.
  void release(uint64_t Base, uint64_t Size);

private:
  AddressHold() = default;
  std::vector<std::pair<uint64_t, uint64_t>> Held; ///< [begin, end)
};

/// The granularity holds are planned with, before the driver can say: 2 MiB,
/// the VMM granularity of every current GPU.
inline constexpr uint64_t PreInitGranularity = 2ull << 20;

class DeviceSpace {
public:
  /// The VMM granularity of Device (2 MiB on current GPUs).
  static Expected<uint64_t> granularity(CUdevice Device);
  /// Reserves and maps every span on Device; undoes what it did on failure.
  static Expected<std::unique_ptr<DeviceSpace>>
  map(const std::vector<PlannedSpan> &Spans, CUdevice Device,
      AddressHold *Hold);
  ~DeviceSpace();
  DeviceSpace(const DeviceSpace &) = delete;
  DeviceSpace &operator=(const DeviceSpace &) = delete;

  uint64_t bytes() const { return Bytes; }

private:
  DeviceSpace() = default;
  Error mapOne(const PlannedSpan &S, CUdevice Device, AddressHold *Hold);

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
