// Timing statistics. Run times are skewed (a long tail of interrupted runs), so
// r3 reports the median, not the mean, and a confidence interval of the median
// that assumes nothing about the distribution: the number of samples below the
// true median is Binomial(N, 1/2), so the interval between the order
// statistics X(k) and X(N-k+1) covers the median with probability
// 1 - 2 P(B <= k-1). k is the largest rank keeping that at least 95% (the
// classical sign-test interval; see e.g. Conover, Practical Nonparametric
// Statistics, 3.2, or Le Boudec, Performance Evaluation of Computer and
// Communication Systems, 2.2.1). Below 6 samples no pair reaches 95%; the
// interval is then [min, max], the widest there is, and says so by its width.
#include "replay/Stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace r3 {

MedianCiRanks medianCiRanks(size_t N) {
  if (N < 6)
    return {N ? 1u : 0u, N};
  // Cdf = P(B <= K) for B ~ Binomial(N, 1/2), accumulated as K grows (each
  // term from the last: C(N, I) = C(N, I - 1) (N - I + 1) / I, in logs), so
  // the ranks cost O(N) (every evaluation's statistics ask for them).
  double LogHalfN = static_cast<double>(N) * std::log(0.5);
  double LogChoose = 0; // log C(N, 0)
  double Cdf = std::exp(LogHalfN);
  auto Grow = [&](size_t I) {
    LogChoose += std::log(static_cast<double>(N - I + 1)) -
                 std::log(static_cast<double>(I));
    Cdf += std::exp(LogChoose + LogHalfN);
  };
  size_t K = 1;
  Grow(1);
  // Grow k while the interval (k+1, N-k) still covers at least 95%.
  while (K + 1 <= N / 2 && 2 * Cdf <= 0.05)
    Grow(++K);
  return {K, N - K + 1};
}

TimingStats computeStats(std::span<const double> Samples) {
  TimingStats S;
  S.Count = Samples.size();
  if (Samples.empty())
    return S;
  std::vector<double> Sorted(Samples.begin(), Samples.end());
  std::sort(Sorted.begin(), Sorted.end());
  size_t N = Sorted.size();
  S.Median = N % 2 ? Sorted[N / 2] : (Sorted[N / 2 - 1] + Sorted[N / 2]) / 2;
  S.Min = Sorted.front();
  S.Max = Sorted.back();
  S.Mean = std::accumulate(Sorted.begin(), Sorted.end(), 0.0) / N;
  MedianCiRanks R = medianCiRanks(N);
  S.CiLow = Sorted[R.Lo - 1];
  S.CiHigh = Sorted[R.Hi - 1];
  return S;
}

TimingStats computeStatsMs(std::span<const uint64_t> SamplesNs) {
  std::vector<double> Ms;
  Ms.reserve(SamplesNs.size());
  for (uint64_t Ns : SamplesNs)
    Ms.push_back(static_cast<double>(Ns) / 1e6);
  return computeStats(Ms);
}

bool RepetitionRule::enough(std::span<const uint64_t> TimesNs) const {
  size_t N = TimesNs.size();
  if (N >= Max)
    return true;
  if (Min == 0 || Min >= Max || N < std::max<size_t>(Min, 6))
    return false;
  TimingStats S = computeStatsMs(TimesNs);
  return S.CiHigh - S.CiLow <= TargetCi * S.Median;
}

} // namespace r3
