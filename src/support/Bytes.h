// Reading integers from files laid out by someone else (HDF5's superblock and
// global heap, a kernel's parameter buffer): little-endian whatever the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace r3 {

/// The unsigned little-endian integer of Bytes bytes (at most 8) at At of B.
inline uint64_t littleEndian(std::span<const uint8_t> B, size_t At,
                             size_t Bytes) {
  uint64_t V = 0;
  for (size_t I = Bytes; I-- > 0;)
    V = (V << 8) | B[At + I];
  return V;
}

} // namespace r3
