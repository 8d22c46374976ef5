// Which device address ranges a CUDA replay must map, and how: the recorded
// regions (allocations that may share a granule, as cuMemAlloc packs small
// allocations into one 2 MiB page) rounded out to the VMM granularity and
// merged where they touch, each merged span labelled with the regions it
// holds so that an address that cannot be mapped is reported by name.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace r3 {

/// A recorded region, by address.
struct SpanRequest {
  uint64_t Base = 0, Size = 0;
  std::string Label; ///< "launch 0, region 'a' (device 0x... +N)"
};

/// One range to reserve and map: granule-aligned, disjoint from the others.
struct PlannedSpan {
  uint64_t Base = 0, Size = 0;
  std::vector<std::string> Labels; ///< of the regions inside, in order
};

/// Spans covering every request, aligned to Granularity (a power of two),
/// sorted, merged when they overlap or touch. Empty requests are ignored.
std::vector<PlannedSpan> planSpans(std::vector<SpanRequest> Requests,
                                   uint64_t Granularity);

/// Where each span of a replay lives when the driver did not place it at its
/// recorded address, and the rewriting of the pointers that must follow:
/// every 8-byte aligned word whose value points into a recorded region, or
/// one past its end, is moved with the span that holds the region.
class Relocation {
public:
  /// One mapped span; spans are added in increasing recorded order.
  void addSpan(uint64_t Recorded, uint64_t Actual, uint64_t Size);
  /// The recorded regions, [base, end); overlapping or touching ones merge.
  void setRegions(std::vector<std::pair<uint64_t, uint64_t>> Regions);
  /// How many spans lie away from their recorded address.
  size_t moved() const { return Moved; }
  /// Where a recorded address lives now (itself outside every span).
  uint64_t translate(uint64_t Recorded) const;
  /// Rewrites the pointers in Bytes, whose first byte was recorded at Base;
  /// returns how many words changed.
  uint64_t relocate(std::span<uint8_t> Bytes, uint64_t Base) const;

private:
  struct Span {
    uint64_t Recorded, Actual, Size;
  };
  std::vector<Span> Spans;
  std::vector<std::pair<uint64_t, uint64_t>> Regions; ///< merged, sorted
  size_t Moved = 0;
};

} // namespace r3
