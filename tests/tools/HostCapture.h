// Host-backend captures for tests, written the way the host runtime would
// write them (one Bitcode module per kernel, argument slots, heap and global
// regions with their pre and post bytes) but with the post-state computed
// here, so that replay tests need no instrumented application.
#pragma once

#include "capture/CaptureWriter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace r3::testing {

/// LLVM bitcode of a module given as IR text; the error carries LLVM's
/// diagnostic.
Expected<std::vector<uint8_t>> bitcodeFromIR(const std::string &IR);

/// The fixture kinds makeHostCapture knows:
///   saxpy       void saxpy(int n, float a, float *x, float *y), y = a*x + y;
///               two launches; reads its output (cannot be poisoned)
///   scale       void scale(int n, float a, float *x, float *out), out = a*x;
///               out's recorded pre-state already holds the right values in
///               [100, 150), so only poisoning catches a variant that skips
///               them
///   chain       scale twice at different addresses; the second launch's
///               input (at ChainCopy) holds the first launch's outputs
///   dot         float dot(float *x, float *y, int n): a return value
///   global      void bump(float *y, int n): y *= factor; calls += 1, with
///               the globals as Global regions
///   unmappable  saxpy with y recorded at an address no process can map
///   cuda        a capture recorded by the CUDA backend
inline const char *HostFixtureKinds[] = {
    "saxpy", "scale", "chain", "dot", "global", "unmappable", "cuda"};

/// Writes a host fixture capture of the given kind to Path.
Error makeHostCapture(const std::string &Kind, const std::string &Path);

/// The IR of the fixtures' kernels, and variants of saxpy for tests: with a
/// wrong constant, a null store, an endless loop, a different signature.
extern const char *const SaxpyIR;
extern const char *const SaxpyWrongIR;
extern const char *const SaxpyNullIR;
extern const char *const SaxpyLoopIR;
extern const char *const SaxpyThreeParamsIR;

/// Where the saxpy fixture's buffers were "allocated".
inline constexpr uint64_t SaxpyX = 0x4a0000001000ull;
inline constexpr uint64_t SaxpyY = 0x4a0000003010ull;
/// Where the chain fixture's second launch reads its input.
inline constexpr uint64_t ChainCopy = 0x4a0000010000ull;

} // namespace r3::testing
