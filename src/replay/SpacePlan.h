// Which device address ranges a CUDA replay must map, and how: the recorded
// regions (allocations that may share a granule, as cuMemAlloc packs small
// allocations into one 2 MiB page) rounded out to the VMM granularity and
// merged where they touch, each merged span labelled with the regions it
// holds so that an address that cannot be mapped is reported by name.
#pragma once

#include <cstdint>
#include <string>
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

} // namespace r3
