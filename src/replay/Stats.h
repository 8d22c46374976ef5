// Timing statistics of repeated runs: the median with a distribution-free 95%
// confidence interval (Stats.cpp says how), min, max and mean.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace r3 {

struct TimingStats {
  size_t Count = 0;
  double Median = 0, CiLow = 0, CiHigh = 0; ///< 95% CI of the median
  double Min = 0, Max = 0, Mean = 0;
};

/// The statistics of Samples (any unit; all zero when there are none).
TimingStats computeStats(std::span<const double> Samples);
/// The same of nanosecond samples, in milliseconds.
TimingStats computeStatsMs(std::span<const uint64_t> SamplesNs);

/// The 1-based ranks (Lo, Hi) of the order statistics that bound a 95%
/// confidence interval of the median of N samples: the widest symmetric pair
/// with P(X(Lo) <= median <= X(Hi)) >= 0.95; (1, N) when N < 6.
struct MedianCiRanks {
  size_t Lo = 0, Hi = 0;
};
MedianCiRanks medianCiRanks(size_t N);

/// The timed runs a candidate takes: at most Max; with Min below Max, fewer
/// once the median's 95% confidence interval is narrower than TargetCi times
/// the median (adaptive repetitions; the interval needs at least 6 samples).
struct RepetitionRule {
  uint32_t Min = 0, Max = 20;
  double TargetCi = 0.01;
  /// Whether the runs so far (nanoseconds) are enough.
  bool enough(std::span<const uint64_t> TimesNs) const;
};

} // namespace r3
