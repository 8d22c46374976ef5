// The device memory of one recorded launch: every region's bytes before the
// launch, and after the launch the full bytes of each region that changed.
// Bytes move a piece (4 MiB) at a time, so a region of many GiB never needs a
// host copy of its own. When `r3 record` made a bulk ring (record/Ring.h),
// each piece is copied from the device straight into a free ring slot (pinned
// once with cuMemHostRegister, so the copy is one DMA) and the parent is told
// which slot holds it; otherwise, and where the ring could not be pinned,
// pieces go through one pinned staging buffer (into the slot, or as the
// stream's bulk bytes). Before the launch each piece's PieceHash is kept; a
// region "changed" when a piece read after the launch hashes differently
// (the first such piece ends the comparison), and only then is it copied a
// second time and sent whole as its post-state.
#pragma once

#include "capture/Capture.h"
#include "record/Protocol.h"
#include "record/Ring.h"
#include "record/cuda/Driver.h"
#include "record/cuda/PieceHash.h"
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
  /// The piece: large enough that a copy's fixed cost is small beside its
  /// bytes, no larger than a ring slot.
  uint64_t ChunkBytes = wire::DefaultRingGeometry.SlotBytes;
};

/// Where a snapshot's bytes go.
struct SnapshotOut {
  wire::FrameWriter *Stream = nullptr;
  /// The bulk ring, or null to send the bytes through Stream.
  wire::RingWriter *Ring = nullptr;
  /// Whether Copy may write into ring slots directly (they are pinned).
  bool CopyIntoRing = false;
};

struct SnapshotRegion {
  RegionInfo Info;               ///< base, size, kind, name
  std::vector<PieceHash> Before; ///< each piece's hash before the launch
};

class Snapshot {
public:
  Snapshot(std::vector<RegionInfo> Regions, SnapshotOut Out,
           SnapshotIo Io = {});
  ~Snapshot();
  Snapshot(const Snapshot &) = delete;
  Snapshot &operator=(const Snapshot &) = delete;

  /// Copies every region (the device must be idle) and sends its Pre frame.
  Error sendPre(uint64_t LaunchId);
  /// After the launch (device idle again): sends the Post frame of each
  /// region whose bytes changed.
  Error sendPost(uint64_t LaunchId);

private:
  struct Piece {
    uint8_t *Bytes = nullptr;
    uint32_t Slot = 0;
    bool InRing = false;
  };
  Error stage();
  Expected<Piece> read(const SnapshotRegion &R, uint64_t Offset, uint64_t N,
                       bool ToRing);
  Error send(const Piece &P, uint64_t N);
  Error sendRegion(uint64_t LaunchId, Phase Side, size_t Index,
                   SnapshotRegion &R);
  Expected<bool> changed(const SnapshotRegion &R);

  std::vector<SnapshotRegion> Regions;
  SnapshotOut Out;
  SnapshotIo Io;
  uint8_t *Staging = nullptr;
};

} // namespace r3::cuda
