// The element rule of verification and the scan that applies it over a
// region: one home for both sides. The host verifier (Verify.cpp) decides
// with these functions; the GPU's verification kernel (cuda/VerifyKernel.cu,
// compiled to PTX when r3 is built) is scanUnits on each thread; the tests
// run scanUnits on the host against the host verifier.
//
// Plain C++ without the standard library beyond <stdint.h>, so that clang
// compiles it for the GPU without the CUDA headers.
#pragma once

#if defined(__CUDA__)
#define R3_HD __attribute__((host, device))
#else
#define R3_HD
#endif

#include <stdint.h>

namespace r3::scan {

/// What one compared unit is.
enum Unit : uint32_t { Byte = 0, F32 = 1, F64 = 2 };
/// The tolerance's kind (ToleranceKind in Candidate.h, in its order).
enum Rule : uint32_t { Exact = 0, Abs = 1, Rel = 2, Ulp = 3 };

/// One scan: units [From, Units) of the two arrays at Expected and Actual
/// (addresses in the scanning device's memory). Unit indices count from the
/// arrays' start, so a scan of a region's tail bytes reports their byte
/// index in the region.
struct Op {
  uint64_t Expected = 0;
  uint64_t Actual = 0;
  uint64_t Units = 0;
  uint64_t From = 0;
  double Value = 0; ///< the tolerance's value
  uint32_t UnitKind = Byte;
  uint32_t RuleKind = Exact;
};

/// What a scan found: how many units differ beyond the rule, and the
/// lowest index among them (NoUnit when none).
struct Result {
  uint64_t Count = 0;
  uint64_t First = ~0ull;
};
constexpr uint64_t NoUnit = ~0ull;

R3_HD inline uint32_t unitBytes(uint32_t U) {
  return U == F32 ? 4 : U == F64 ? 8 : 1;
}

R3_HD inline bool isNan32(uint32_t B) {
  return (B & 0x7fffffffu) > 0x7f800000u;
}
R3_HD inline bool isNan64(uint64_t B) {
  return (B & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}

/// How many representable values apart two floats of one width are (their
/// bits with the sign bit SignBit): +0 and -0 are 0 apart.
R3_HD inline uint64_t ulpsApart(uint64_t E, uint64_t G, uint64_t SignBit) {
  uint64_t ME = E & ~SignBit, MG = G & ~SignBit;
  if ((E & SignBit) == (G & SignBit))
    return ME > MG ? ME - MG : MG - ME;
  return ME + MG;
}

/// The rule on two numbers that are neither bitwise equal nor NaN, as
/// doubles (both exact images of the floats), Ulps their distance.
R3_HD inline bool withinRule(double E, double G, uint64_t Ulps, uint32_t R,
                             double V) {
  if (E == G)
    return true;
  double Diff = __builtin_fabs(G - E);
  switch (R) {
  case Abs:
    return Diff <= V;
  case Rel:
    return Diff <= V * __builtin_fabs(E);
  case Ulp:
    return V >= 18446744073709551616.0 || Ulps <= static_cast<uint64_t>(V);
  default:
    return false;
  }
}

/// Whether Got passes for Expected (Verify.cpp's rules): equal bits pass;
/// under exact nothing else does; NaN against NaN passes, NaN against a
/// number fails either way; equal values (signed zeros) pass; then the rule.
R3_HD inline bool close32(uint32_t E, uint32_t G, uint32_t R, double V) {
  if (E == G)
    return true;
  if (R == Exact)
    return false;
  bool EN = isNan32(E), GN = isNan32(G);
  if (EN || GN)
    return EN && GN;
  return withinRule(__builtin_bit_cast(float, E), __builtin_bit_cast(float, G),
                    ulpsApart(E, G, 0x80000000u), R, V);
}
R3_HD inline bool close64(uint64_t E, uint64_t G, uint32_t R, double V) {
  if (E == G)
    return true;
  if (R == Exact)
    return false;
  bool EN = isNan64(E), GN = isNan64(G);
  if (EN || GN)
    return EN && GN;
  return withinRule(__builtin_bit_cast(double, E),
                    __builtin_bit_cast(double, G),
                    ulpsApart(E, G, 0x8000000000000000ull), R, V);
}

/// Unit I of the op: whether it passes. Loads byte by byte, so that any
/// alignment works.
R3_HD inline bool unitPasses(const Op &O, uint64_t I) {
  const uint8_t *E = reinterpret_cast<const uint8_t *>(O.Expected);
  const uint8_t *A = reinterpret_cast<const uint8_t *>(O.Actual);
  uint32_t N = unitBytes(O.UnitKind);
  uint64_t EB = 0, AB = 0;
  for (uint32_t K = 0; K < N; ++K) {
    EB |= uint64_t(E[I * N + K]) << (8 * K);
    AB |= uint64_t(A[I * N + K]) << (8 * K);
  }
  if (O.UnitKind == F32)
    return close32(static_cast<uint32_t>(EB), static_cast<uint32_t>(AB),
                   O.RuleKind, O.Value);
  if (O.UnitKind == F64)
    return close64(EB, AB, O.RuleKind, O.Value);
  return EB == AB;
}

/// One thread's share of a scan: of Threads threads, thread Thread takes
/// every Threads-th piece, adding its failing units to Count and the lowest
/// of them to First. Where both arrays are 16-byte aligned at From, a piece
/// is 16 bytes, compared whole first (equal bytes always pass), so that a
/// passing region costs one wide load of each side per 16 bytes.
R3_HD inline void scanUnits(const Op &O, uint64_t Thread, uint64_t Threads,
                            uint64_t &Count, uint64_t &First) {
  uint32_t N = unitBytes(O.UnitKind);
  uint64_t Begin = O.From, Bulk = 0;
  if (Begin >= O.Units)
    return;
  if (((O.Expected + Begin * N) | (O.Actual + Begin * N)) % 16 == 0) {
    uint64_t PerPiece = 16 / N, Pieces = (O.Units - Begin) / PerPiece;
    struct alignas(16) Pair {
      uint64_t Lo, Hi;
    };
    const Pair *E = reinterpret_cast<const Pair *>(O.Expected + Begin * N);
    const Pair *A = reinterpret_cast<const Pair *>(O.Actual + Begin * N);
    for (uint64_t P = Thread; P < Pieces; P += Threads) {
      Pair X = E[P], Y = A[P];
      if (((X.Lo ^ Y.Lo) | (X.Hi ^ Y.Hi)) == 0) // both loads, one branch
        continue;
      for (uint64_t I = Begin + P * PerPiece, End = I + PerPiece; I < End; ++I)
        if (!unitPasses(O, I)) {
          ++Count;
          First = I < First ? I : First;
        }
    }
    Bulk = Pieces * PerPiece;
  }
  for (uint64_t I = Begin + Bulk + Thread; I < O.Units; I += Threads)
    if (!unitPasses(O, I)) {
      ++Count;
      First = I < First ? I : First;
    }
}

} // namespace r3::scan
