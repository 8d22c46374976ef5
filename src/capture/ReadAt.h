// How r3's checks of HDF5 metadata read the file (Superblock, GlobalHeap,
// ObjectHeader): bytes at an offset, or an error that says where.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <functional>
#include <span>

namespace r3 {

/// Reads Out.size() bytes at Offset of the file (an error where it cannot).
using ReadAt = std::function<Error(uint64_t Offset, std::span<uint8_t> Out)>;

} // namespace r3
