// The Fletcher-32 checksum exactly as HDF5's fletcher32 filter computes it,
// so that the capture writer can checksum a chunk itself and hand HDF5 the
// finished chunk (H5Dwrite_chunk) instead of sending every byte through the
// filter pipeline, which copies each chunk twice and checksums it 16 bits at
// a time. Readers, r3's and any other HDF5 program, verify it as usual.
#pragma once

#include <cstdint>
#include <span>

namespace r3 {

/// HDF5's Fletcher-32 of Bytes: big-endian 16-bit words (an odd last byte is
/// the high half of a word), sums modulo 65535 kept in [1, 65535] once any
/// word was non-zero, returned as (sum2 << 16) | sum1.
uint32_t fletcher32(std::span<const uint8_t> Bytes);

/// The 4 bytes HDF5 stores after a filtered chunk: the checksum, little-endian.
void storeFletcher32(uint32_t Sum, uint8_t *Out);

} // namespace r3
