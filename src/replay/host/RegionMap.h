// Recorded memory at its recorded addresses. Host kernels hold pointers (to
// their arguments' buffers, inside linked structures), so the replay server
// maps every region where the application had it, so that the pointers
// inside them stay valid without rewriting. The whole address range a capture needs is
// reserved once, before the JIT or the allocator can take any of it; each
// launch then commits the pages of its own regions and returns them after.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// A span of memory to map, with the words that name it in an error.
struct MappedSpan {
  uint64_t Base = 0;
  uint64_t Size = 0;
  std::string Label; ///< "launch 0, region 'y' (heap 0x... +4096)"
};

/// A page-aligned range [Begin, End).
struct PageRange {
  uint64_t Begin = 0, End = 0;
};

/// The page ranges covering Spans, sorted, with overlapping and adjacent ones
/// merged. Empty spans cover nothing.
std::vector<PageRange> pageRanges(std::span<const MappedSpan> Spans);

/// A byte range [Begin, End), not necessarily page-aligned.
struct ByteRange {
  uint64_t Begin = 0, End = 0;
};

/// The bytes of the pages covering Spans that no span covers: the slack a
/// commit maps around the regions, where a kernel has no business writing
/// (in the application it belonged to other allocations). Sorted.
std::vector<ByteRange> slackRanges(std::span<const MappedSpan> Spans);

/// Address space held at fixed addresses for the life of the replay.
class AddressReservation {
public:
  /// Reserves (inaccessible) the pages of every span with
  /// MAP_FIXED_NOREPLACE; an error names the range and a span in it when the
  /// range is taken or cannot be mapped.
  static Expected<std::unique_ptr<AddressReservation>>
  reserve(std::span<const MappedSpan> Spans);
  ~AddressReservation();

  /// Makes the pages of Spans readable and writable, zero-filled. Every span
  /// must lie in the reservation.
  Error commit(std::span<const MappedSpan> Spans);
  /// Returns every committed page to the reservation, dropping its contents.
  void decommitAll();

  const std::vector<PageRange> &ranges() const { return Reserved; }

private:
  AddressReservation() = default;
  std::vector<PageRange> Reserved;
  std::vector<PageRange> Committed;
};

} // namespace r3
