// What a snapshot keeps of a region's bytes before the launch, to tell after
// it whether the launch changed them: for every piece (a staging copy, 4 MiB),
// the state of four independent 64-bit lanes, each word of the piece mixed
// into lane (word index mod 4) by an invertible step (multiply by an odd
// constant, rotate, multiply), so two pieces that differ in one 8-byte word
// always end in different states, and the chance that any other change ends
// in the same 256 bits is negligible (the lanes are never folded together).
// Keeping 32 bytes per 4 MiB instead of a second copy of the region saves the
// host memory of the whole working set and a copy of every byte.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>

namespace r3::cuda {

using PieceHash = std::array<uint64_t, 4>;

inline uint64_t mixWord(uint64_t Lane, uint64_t Word) {
  constexpr uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full;
  Lane += Word * P2;
  Lane = (Lane << 31) | (Lane >> 33);
  return Lane * P1;
}

/// The lanes after Bytes; the length goes in too, so a piece and the same
/// piece with zeros appended differ.
inline PieceHash hashPiece(std::span<const uint8_t> Bytes) {
  PieceHash H = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull,
                 0xA4093822299F31D0ull, 0x082EFA98EC4E6C89ull};
  const uint8_t *P = Bytes.data();
  size_t N = Bytes.size(), I = 0;
  for (; I + 32 <= N; I += 32) {
    uint64_t W[4];
    std::memcpy(W, P + I, 32);
    for (int L = 0; L < 4; ++L)
      H[L] = mixWord(H[L], W[L]);
  }
  if (I < N) { // the tail, zero-padded to a block
    uint64_t W[4] = {0, 0, 0, 0};
    std::memcpy(W, P + I, N - I);
    for (int L = 0; L < 4; ++L)
      H[L] = mixWord(H[L], W[L]);
  }
  H[0] = mixWord(H[0], N);
  return H;
}

} // namespace r3::cuda
