// The bulk ring: how a CUDA snapshot's region bytes reach `r3 record`
// without passing through the socket. `r3 record` creates a shared memory
// file (memfd) of Slots slots of SlotBytes each and the recorded process
// inherits it (RecordEnv's R3_RECORD_RING). The injection library copies
// device memory straight into a slot (pinned with cuMemHostRegister, so the
// copy is one DMA), and sends a RingChunk frame {slot, bytes} on the socket in
// place of the bytes themselves; the parent reads the slot, writes it to the
// capture and sends the slot's number back over the same socket, which frees
// it. The socket stays the one ordered channel (frames never overtake each
// other), so the ring adds no protocol state beyond which slots are free;
// a slot is in the hands of exactly one side at a time.
//
// Bytes through the socket cost two copies in the kernel and, on the record
// side, the contention of two processes taking turns on its buffer; through
// the ring they cost none (see bench/README.md for the measured difference).
// libc only: both ends link it.
#pragma once

#include "record/Protocol.h"
#include "support/Error.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3::wire {

struct RingGeometry {
  uint32_t Slots = 0;
  uint64_t SlotBytes = 0;
  uint64_t bytes() const { return uint64_t(Slots) * SlotBytes; }
};

/// Eight slots of 4 MiB (the capture's largest HDF5 chunk): enough that
/// the copy into one slot overlaps the parent's writing of the others.
inline constexpr RingGeometry DefaultRingGeometry{8, 4ull << 20};

/// The most a geometry may ask for: a corrupt environment must not make the
/// recorded process map gigabytes.
inline constexpr uint64_t MaxRingBytes = 1ull << 30;

/// One mapping of the ring's shared memory.
class BulkRing {
public:
  BulkRing() = default;
  /// The parent's: a new memfd of G's size, mapped here; its descriptor is
  /// inheritable (no close-on-exec) until closeFd().
  static Expected<BulkRing> create(RingGeometry G);
  /// The recorded process's: maps the ring that the parent created and
  /// closes Fd (the mapping keeps the memory).
  static Expected<BulkRing> attach(int Fd, RingGeometry G);
  BulkRing(BulkRing &&O) noexcept { *this = std::move(O); }
  BulkRing &operator=(BulkRing &&O) noexcept;
  ~BulkRing();

  explicit operator bool() const { return Base != nullptr; }
  RingGeometry geometry() const { return Geometry; }
  uint8_t *slot(uint32_t I) const { return Base + I * Geometry.SlotBytes; }
  uint8_t *base() const { return Base; }
  int fd() const { return Fd; }
  void closeFd();

private:
  uint8_t *Base = nullptr;
  RingGeometry Geometry;
  int Fd = -1;
};

/// Checks a geometry read from the environment.
Error checkRingGeometry(const RingGeometry &G);

/// The recorded process's end: hands out free slots and posts filled ones.
class RingWriter {
public:
  /// Fd is the record stream's socket, which W also writes.
  RingWriter(BulkRing Ring, int Fd, FrameWriter &W);
  const BulkRing &ring() const { return Ring; }
  /// A free slot, waiting for the parent to give one back when none is.
  Expected<uint32_t> acquire();
  /// Returns a slot that was acquired but not posted.
  void release(uint32_t Slot) { Free.push_back(Slot); }
  /// Sends the RingChunk frame for the first Bytes bytes of Slot.
  Error post(uint32_t Slot, uint64_t Bytes);

private:
  BulkRing Ring;
  int Fd;
  FrameWriter *W;
  std::vector<uint32_t> Free;
};

/// The parent's end: the bytes of one ring region, RingChunk frame by frame.
class RingReader {
public:
  /// Fd is the record stream's socket.
  RingReader(const BulkRing &Ring, int Fd) : Ring(&Ring), Fd(Fd) {}
  /// Starts a region of Size bytes (its Region frame has just been read).
  void beginRegion(uint64_t Size);
  /// The region's next Out.size() bytes, reading RingChunk frames and giving
  /// back every slot it has emptied.
  Error read(std::span<uint8_t> Out);
  /// Whether the region's bytes have all been read (and their slots given
  /// back).
  bool regionDone() const { return Left == 0 && Pending == 0; }
  /// The message of a Failure frame that came in place of a chunk: the
  /// recording failed in the middle of the region.
  const std::string &failure() const { return Failure; }

private:
  Error nextChunk();
  Error giveBack();
  const BulkRing *Ring;
  int Fd;
  uint64_t Left = 0;    ///< bytes of the region not yet announced
  uint32_t Slot = 0;    ///< the slot being read
  uint64_t Offset = 0;  ///< how far into it
  uint64_t Pending = 0; ///< bytes of it still to read
  std::string Failure;
};

} // namespace r3::wire
