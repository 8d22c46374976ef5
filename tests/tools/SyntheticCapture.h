// Synthetic captures for tests and benchmarks: deterministic contents that a
// reader can check byte for byte without keeping them in memory.
#pragma once

#include "capture/CaptureWriter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace r3::testing {

/// The byte at Offset of synthetic region Seed: a cheap, position-dependent
/// hash.
inline uint8_t syntheticByte(uint64_t Seed, uint64_t Offset) {
  uint64_t X =
      (Offset + 1) * 0x9E3779B97F4A7C15ull ^ (Seed * 0xBF58476D1CE4E5B9ull);
  X ^= X >> 31;
  return static_cast<uint8_t>(X);
}

/// A ByteSource producing syntheticByte(Seed, Offset).
ByteSource syntheticSource(uint64_t Seed);

/// What a synthetic capture contains.
struct SyntheticSpec {
  uint32_t Kernels = 2;
  uint32_t LaunchesPerKernel = 2;
  uint32_t RegionsPerLaunch = 3;
  uint64_t RegionBytes =
      64 << 10; ///< size of the first region; others are smaller
  CaptureCompression Compression = CaptureCompression::None;
};

/// Writes a synthetic capture to Path. Region r of launch l has seed
/// regionSeed(l, r, Phase); odd regions are changed by the launch.
Error writeSyntheticCapture(const std::string &Path, const SyntheticSpec &Spec);

inline uint64_t regionSeed(uint32_t Launch, uint32_t Region, Phase P) {
  return (uint64_t(Launch) << 32) | (uint64_t(Region) << 1) |
         (P == Phase::Post);
}
/// Size of region r in a synthetic capture.
inline uint64_t syntheticRegionSize(const SyntheticSpec &S, uint32_t Region) {
  return Region == 0 ? S.RegionBytes : 4096 + 1000 * Region;
}

/// One launch of a CUDA kernel, for the compile tests' specialization.
struct CudaKernelSpec {
  std::string Kernel;              ///< mangled
  std::string Grid, Block;         ///< "X[,Y[,Z]]"
  std::vector<std::string> Params; ///< "i32:5", "f32:1.5", "ptr:0x1000", ...
};

/// Writes a CUDA capture holding one launch of Spec.Kernel.
Error writeCudaKernelCapture(const std::string &Path,
                             const CudaKernelSpec &Spec);

/// The fixture kinds makeCaptureFixture knows.
inline const char *FixtureKinds[] = {
    "good",           "deflate",    "not-hdf5",        "other-schema",
    "future-version", "incomplete", "missing-dataset", "zero-length",
    "flipped-byte",   "truncated",  "damaged-heap"};

/// Writes a good or a damaged capture of the given kind to Path.
Error makeCaptureFixture(const std::string &Kind, const std::string &Path);

} // namespace r3::testing
