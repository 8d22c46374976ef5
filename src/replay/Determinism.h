// Is the recorded kernel deterministic? A kernel whose float atomics add in
// whatever order the hardware schedules them (a particle deposit, a
// reduction) gives outputs that differ in their last bits from run to run:
// exact verification then fails even for the application's own cubin, and
// every candidate of a campaign would be a wrong result. So before a
// campaign (and with `r3 replay --check-determinism`) the recorded code runs
// several times and each run's outputs are compared with the recorded ones;
// this file measures how far they differ, region by region, read as f32 and
// as f64 elements, and proposes a tolerance that covers it. r3 never
// loosens verification by itself: the user sets the tolerance.
#pragma once

#include "replay/Candidate.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// How one output region varied over the runs.
struct RegionSpread {
  std::string Label;
  uint64_t Bytes = 0;     ///< the region's size
  uint64_t Differing = 0; ///< bytes that differed from the recording in a run
  /// The largest |got - expected| / |expected| over differing elements,
  /// read as f32 and as f64 (infinite where an element is not a finite
  /// number in one reading).
  double MaxRelF32 = 0, MaxRelF64 = 0;
  /// Adds one run's bytes (Actual) against the recorded ones.
  void add(std::span<const uint8_t> Expected, std::span<const uint8_t> Actual);
};

/// What the check found over every launch and run.
struct SpreadReport {
  std::vector<RegionSpread> Regions; ///< those that differed at least once
  uint32_t Runs = 0;
  bool deterministic() const { return Regions.empty(); }
  /// "3 of 5 runs: region 'rho' (...) differs in 1024 of 65536 bytes, up to
  /// 2.4e-07 relative as f32 (1.3e-06 as f64)".
  std::string message() const;
  /// The tolerance that covers the differences seen, with a margin: the
  /// campaign keys ("tolerance = \"rel\", value = 1e-06, dtype = \"f32\"").
  std::string proposal() const;
};

} // namespace r3
