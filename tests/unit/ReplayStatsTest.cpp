// Timing statistics: median, the order-statistic 95% CI of the median, min,
// max, mean.
#include "Catch.h"

#include "replay/Stats.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace r3;

TEST_CASE("stats: no samples") {
  TimingStats S = computeStats({});
  CHECK(S.Count == 0);
  CHECK(S.Median == 0);
}

TEST_CASE("stats: median of odd and even counts, min, max, mean") {
  std::vector<double> Odd = {5, 1, 3};
  TimingStats S = computeStats(Odd);
  CHECK(S.Median == 3);
  CHECK(S.Min == 1);
  CHECK(S.Max == 5);
  CHECK(S.Mean == 3);
  std::vector<double> Even = {4, 1, 3, 2};
  CHECK(computeStats(Even).Median == 2.5);
}

TEST_CASE("stats: fewer than 6 samples give [min, max]") {
  std::vector<double> V = {3, 9, 1, 7, 5};
  TimingStats S = computeStats(V);
  CHECK(S.CiLow == 1);
  CHECK(S.CiHigh == 9);
  CHECK(medianCiRanks(1).Lo == 1);
  CHECK(medianCiRanks(1).Hi == 1);
}

TEST_CASE("stats: CI ranks match the binomial sign-test table") {
  // Published ranks for a >= 95% CI of the median (e.g. Conover, table A3).
  struct Row {
    size_t N, Lo, Hi;
  } Table[] = {{6, 1, 6},    {8, 1, 8},    {9, 2, 8},   {10, 2, 9},
               {12, 3, 10},  {15, 4, 12},  {20, 6, 15}, {30, 10, 21},
               {50, 18, 33}, {100, 40, 61}};
  for (const Row &R : Table) {
    INFO("N = " << R.N);
    CHECK(medianCiRanks(R.N).Lo == R.Lo);
    CHECK(medianCiRanks(R.N).Hi == R.Hi);
  }
}

TEST_CASE("stats: CI ranks of many samples follow the normal limit") {
  // n/2 - 1.96 sqrt(n)/2 (the normal approximation of the sign test) for n
  // too large for 0.5^n to be a double: the terms must be summed in logs.
  for (size_t N : {1000u, 5000u}) {
    INFO("N = " << N);
    MedianCiRanks R = medianCiRanks(N);
    double Approx = N / 2.0 - 1.96 * std::sqrt(static_cast<double>(N)) / 2;
    CHECK(std::abs(static_cast<double>(R.Lo) - Approx) <= 2);
    CHECK(R.Lo + R.Hi == N + 1);
  }
}

TEST_CASE("stats: the CI of sorted 1..20 is [X(6), X(15)]") {
  std::vector<double> V;
  for (int I = 20; I >= 1; --I)
    V.push_back(I);
  TimingStats S = computeStats(V);
  CHECK(S.Median == 10.5);
  CHECK(S.CiLow == 6);
  CHECK(S.CiHigh == 15);
}

TEST_CASE("stats: the CI covers the true median about 95% of the time") {
  std::mt19937_64 Rng(42);
  std::exponential_distribution<double> Dist(1.0); // skewed, like run times
  const double TrueMedian = std::log(2.0);
  int Covered = 0;
  const int Trials = 2000;
  for (int T = 0; T < Trials; ++T) {
    std::vector<double> V(25);
    for (double &X : V)
      X = Dist(Rng);
    TimingStats S = computeStats(V);
    Covered += S.CiLow <= TrueMedian && TrueMedian <= S.CiHigh;
  }
  double Rate = double(Covered) / Trials;
  CHECK(Rate >= 0.94);
  CHECK(Rate <= 0.995);
}

TEST_CASE("stats: nanoseconds convert to milliseconds") {
  std::vector<uint64_t> Ns = {1000000, 3000000, 2000000};
  TimingStats S = computeStatsMs(Ns);
  CHECK(S.Median == 2.0);
  CHECK(S.Min == 1.0);
}

TEST_CASE("repetition rule: fixed counts, early stops, the 6-sample floor") {
  std::vector<uint64_t> Steady(5, 1000000), Noisy;
  RepetitionRule Fixed{0, 8, 0.01};
  CHECK_FALSE(Fixed.enough(Steady));
  Steady.resize(8, 1000000);
  CHECK(Fixed.enough(Steady));
  RepetitionRule Adaptive{6, 100, 0.01};
  std::vector<uint64_t> Five(5, 1000000);
  CHECK_FALSE(Adaptive.enough(Five)); // no interval below 6 samples
  std::vector<uint64_t> Six = {1000000, 1001000, 999000,
                               1000500, 1000200, 999800};
  CHECK(Adaptive.enough(Six)); // a 0.2% wide interval
  for (uint64_t I = 0; I < 50; ++I)
    Noisy.push_back(1000000 + 2000 * (I * 7919 % 1000)); // 1 to 3 ms
  CHECK_FALSE(Adaptive.enough(Noisy)); // spread over a factor of three
  Noisy.resize(100, 1000000);
  CHECK(Adaptive.enough(Noisy)); // the maximum ends it
  RepetitionRule MinAboveSix{10, 100, 0.01};
  CHECK_FALSE(MinAboveSix.enough(Six));
}
