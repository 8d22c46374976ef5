// Fletcher-32, vectorized. HDF5's loop adds one word at a time to sum1 and
// sum1 to sum2, folding both modulo 65535 every 360 words. The same sums come
// out of 16 independent lanes (word j goes to lane j % 16), each a Fletcher
// sum of its own words, combined at the end of a block: for a block of R rows
// of 16 words, sum1 = sum of the lanes' s1, and sum2 = 16 * (sum of the
// lanes' s2) - sum of l * s1[l] (word 16r + l is counted n - 16r - l times).
// 32-bit lanes hold 360 rows without overflow. HDF5's folding never yields 0
// from a non-zero sum, so its result is the residue in [1, 65535], or 0 when
// every word is 0; only that canonical form is needed to match it.
#include "capture/Fletcher32.h"

#include <cstring>

namespace r3 {

namespace {
constexpr uint64_t Mod = 65535;
constexpr size_t Lanes = 16;
constexpr size_t BlockRows = 360;

// Eight lanes per vector, two vectors per row: sizes every x86-64 target
// handles in registers (wider vectors are split badly without AVX-512).
typedef uint16_t Words __attribute__((vector_size(16)));
typedef uint32_t Sums __attribute__((vector_size(32)));
constexpr size_t Half = Lanes / 2;

struct Running {
  uint64_t S1 = 0, S2 = 0; ///< modulo 65535
  uint64_t Exact1 = 0;     ///< the plain sum of every word: 0 iff all are 0
};

/// Adds the 8 big-endian words at P to A, lane by lane (by reference: a
/// 32-byte vector passed by value would change the ABI with the target).
inline void addWords(Sums &A, const uint8_t *P) {
  Words W;
  std::memcpy(&W, P, sizeof(W));
  W = (W << 8) | (W >> 8);
  A += __builtin_convertvector(W, Sums);
}

/// Lane sums of Rows rows of 16 big-endian words (Rows <= 360): lanes 0-7
/// in [0], 8-15 in [1].
#if defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
void laneSums(const uint8_t *P, size_t Rows, Sums (&S1)[2], Sums (&S2)[2]) {
  Sums A0 = {}, A1 = {}, B0 = {}, B1 = {};
  for (size_t R = 0; R < Rows; ++R, P += 2 * Lanes) {
    addWords(A0, P);
    addWords(A1, P + 2 * Half);
    B0 += A0;
    B1 += A1;
  }
  S1[0] = A0;
  S1[1] = A1;
  S2[0] = B0;
  S2[1] = B1;
}

/// Adds a block of Rows full rows to the running sums.
void addBlock(Running &Run, const uint8_t *P, size_t Rows) {
  Sums S1[2], S2[2];
  laneSums(P, Rows, S1, S2);
  uint64_t A = 0, B = 0, Weighted = 0;
  for (size_t L = 0; L < Lanes; ++L) {
    uint64_t Lane1 = S1[L / Half][L % Half];
    A += Lane1;
    B += S2[L / Half][L % Half];
    Weighted += L * Lane1;
  }
  uint64_t Block2 = Lanes * B - Weighted; // the block's own sum2, exact
  uint64_t N = Rows * Lanes;
  Run.S2 = (Run.S2 + N * Run.S1 + Block2) % Mod;
  Run.S1 = (Run.S1 + A) % Mod;
  Run.Exact1 += A;
}

void addWord(Running &Run, uint32_t W) {
  Run.S1 = (Run.S1 + W) % Mod;
  Run.S2 = (Run.S2 + Run.S1) % Mod;
  Run.Exact1 += W;
}

uint32_t canonical(uint64_t S, bool AnyNonZero) {
  return AnyNonZero && S == 0 ? uint32_t(Mod) : uint32_t(S);
}
} // namespace

uint32_t fletcher32(std::span<const uint8_t> Bytes) {
  Running Run;
  const uint8_t *P = Bytes.data();
  size_t Rows = Bytes.size() / (2 * Lanes);
  for (size_t Done = 0; Done < Rows;) {
    size_t N = std::min(BlockRows, Rows - Done);
    addBlock(Run, P, N);
    P += N * 2 * Lanes;
    Done += N;
  }
  const uint8_t *End = Bytes.data() + Bytes.size();
  for (; End - P >= 2; P += 2)
    addWord(Run, uint32_t(P[0]) << 8 | P[1]);
  if (P != End) // an odd last byte is the high half of a word
    addWord(Run, uint32_t(P[0]) << 8);
  bool Any = Run.Exact1 != 0;
  return canonical(Run.S2, Any) << 16 | canonical(Run.S1, Any);
}

void storeFletcher32(uint32_t Sum, uint8_t *Out) {
  for (int I = 0; I < 4; ++I)
    Out[I] = uint8_t(Sum >> (8 * I));
}

} // namespace r3
