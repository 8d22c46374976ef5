// The simulation mode of the search: a strategy run against a tuning cache,
// where evaluating a configuration is a lookup, so that strategies can be
// compared over many seeds without a GPU and without measurement noise. This
// is the methodology of Schoonhoven et al., "Benchmarking optimization
// algorithms for auto-tuning GPU kernels" (IEEE TEVC 2022), whose brute-forced
// Kernel Tuner caches we read, and of BAT (Torring et al., "Towards a
// benchmarking suite for kernel tuners", IPDPSW 2023).
#pragma once

#include "search/Strategy.h"
#include "search/TuningCache.h"

#include <optional>
#include <vector>

namespace r3::search {

/// One evaluation of a simulation, in the order they were made.
struct SimulatedEvaluation {
  Point P;
  /// The point's time, or none when it failed (or is not in the cache).
  std::optional<double> Value;
  /// The best time of this and every earlier evaluation, or none while
  /// every evaluation failed.
  std::optional<double> BestSoFar;
};

struct SimulationTrace {
  std::vector<SimulatedEvaluation> Evaluations;
  /// Whether the strategy ran out of points before the budget was spent.
  bool Exhausted = false;
  /// Evaluations of points absent from the cache (a strategy leaving the
  /// space); they count as failures.
  unsigned NotInCache = 0;

  /// Appends an evaluation, keeping BestSoFar.
  void add(Point P, std::optional<double> Value);
  /// The best time found, if any evaluation succeeded.
  std::optional<double> best() const;
};

/// Runs S against C: proposes Batch points at a time (fewer near the end of
/// the budget), looks each up and observes its outcome (a failure as none),
/// until Budget evaluations are done or S proposes nothing. S must have been
/// made over C.SearchSpace.
SimulationTrace simulate(Strategy &S, const TuningCache &C, unsigned Budget,
                         unsigned Batch);

/// The number of evaluations after which the best time was within Percent
/// of Optimum (best <= Optimum * (1 + Percent / 100)); none if never.
std::optional<size_t> evaluationsToWithin(const SimulationTrace &T,
                                          double Optimum, double Percent);

/// The best time after K evaluations: none when nothing had succeeded by
/// then, or when the run stopped at its budget before K evaluations (a run
/// that exhausted the space keeps its final best).
std::optional<double> bestAt(const SimulationTrace &T, size_t K);

} // namespace r3::search
