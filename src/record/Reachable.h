// What a launch can reach: the allocations its parameters point into and,
// transitively and conservatively, those that pointers stored in reachable
// memory point into. A capture of only these holds everything a kernel can
// read or write through the pointers it was given (the whole-memory mode
// records every live allocation instead: `r3 record --memory all`).
//
// "Pointer" is any word whose value lies inside an allocation: the parameter
// buffer is read at every 4-byte offset, memory at every 8-byte one (device
// pointers in memory are 8-byte aligned); a parameter just past an
// allocation's end reaches it too, as the host backend's recorder counts an
// end pointer (record/host/RuntimeCapture.cpp, which walks host memory the
// same way with its own refusals and names). Data that happens to look like an
// address only adds an allocation, never drops one. What this cannot see is
// an address the kernel computes from something that is not a pointer into
// the allocation (an integer offset from another allocation's base, a
// pointer past its allocation's end): for such a kernel, record all memory.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace r3 {

/// [Base, Base + Size) of one allocation.
struct Extent {
  uint64_t Base = 0, Size = 0;
};

/// Reads To.size() bytes of the device's memory at Address.
using ReadMemory =
    std::function<Error(uint64_t Address, std::span<uint8_t> To)>;

/// Which of Allocations (disjoint; any order) are reachable from the words of
/// Roots (bytes on the host: the parameter buffer) and of RootMemory (the
/// module's globals, read through Read), following pointers through the
/// allocations reached, each read once in pieces of ChunkBytes. One flag per
/// allocation, in Allocations' order.
Expected<std::vector<bool>>
reachableAllocations(const std::vector<Extent> &Allocations,
                     const std::vector<std::span<const uint8_t>> &Roots,
                     const std::vector<Extent> &RootMemory,
                     const ReadMemory &Read, uint64_t ChunkBytes = 4 << 20);

} // namespace r3
