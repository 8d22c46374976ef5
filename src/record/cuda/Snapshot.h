// The device memory of one recorded launch: every region's bytes before the
// launch, streamed to `r3 record` as they are copied and kept in host memory,
// and after the launch the full bytes of each region that changed. Bytes move
// through one pinned staging buffer, a chunk at a time, so a region of many
// GiB never needs a second host copy. A region "changed" when any byte of it
// differs from the copy taken before (exact comparison, chunk by chunk); only
// then is it copied a second time and sent whole as its post-state.
#pragma once

#include "capture/Capture.h"
#include "record/Protocol.h"
#include "record/cuda/Driver.h"
#include "support/Error.h"

#include <cstdint>
#include <vector>

namespace r3::cuda {

/// How a snapshot reaches memory: through the driver, or, in tests, through
/// functions over host buffers standing in for the device.
struct SnapshotIo {
  Error (*Copy)(void *Dst, uint64_t Src, uint64_t Size) = copyToHost;
  Expected<void *> (*Allocate)(uint64_t Size) = allocatePinned;
  void (*Free)(void *P) = freePinned;
  /// The staging buffer's size: large enough that a copy's fixed cost is
  /// small beside its bytes, small enough to pin in any process.
  uint64_t ChunkBytes = 32ull << 20;
};

struct SnapshotRegion {
  RegionInfo Info;        ///< base, size, kind, name
  uint8_t *Pre = nullptr; ///< the bytes before the launch (a private mapping)
};

class Snapshot {
public:
  explicit Snapshot(std::vector<RegionInfo> Regions, SnapshotIo Io = {});
  ~Snapshot();
  Snapshot(const Snapshot &) = delete;
  Snapshot &operator=(const Snapshot &) = delete;

  /// Copies every region (the device must be idle) and sends its Pre frame.
  Error sendPre(wire::FrameWriter &W, uint64_t LaunchId);
  /// After the launch (device idle again): sends the Post frame of each
  /// region whose bytes changed.
  Error sendPost(wire::FrameWriter &W, uint64_t LaunchId);

private:
  Error stage();
  Error copyPre(wire::FrameWriter &W, SnapshotRegion &R);
  Expected<bool> changed(const SnapshotRegion &R);
  Error resend(wire::FrameWriter &W, const SnapshotRegion &R);

  std::vector<SnapshotRegion> Regions;
  SnapshotIo Io;
  uint8_t *Staging = nullptr;
};

} // namespace r3::cuda
