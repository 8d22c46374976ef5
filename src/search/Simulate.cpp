// The simulation loop and the measures strategy comparisons report: how many
// evaluations a strategy needs to come within a given distance of the
// optimum, and how good its best is after a given number of evaluations.
// Each batch is proposed, then every point of it observed, as a campaign with
// Batch idle workers would see them return.
#include "search/Simulate.h"

#include <algorithm>
#include <cmath>

namespace r3::search {

void SimulationTrace::add(Point P, std::optional<double> Value) {
  std::optional<double> Best = best();
  if (Value && (!Best || *Value < *Best))
    Best = Value;
  Evaluations.push_back({std::move(P), Value, Best});
}

std::optional<double> SimulationTrace::best() const {
  if (Evaluations.empty())
    return std::nullopt;
  return Evaluations.back().BestSoFar;
}

SimulationTrace simulate(Strategy &S, const TuningCache &C, unsigned Budget,
                         unsigned Batch) {
  SimulationTrace T;
  Batch = std::max(Batch, 1u);
  while (T.Evaluations.size() < Budget) {
    unsigned Left = Budget - static_cast<unsigned>(T.Evaluations.size());
    std::vector<Point> Ps = S.propose(std::min(Batch, Left));
    if (Ps.empty()) {
      T.Exhausted = true;
      break;
    }
    if (Ps.size() > Left)
      Ps.resize(Left);
    for (Point &P : Ps) {
      const CacheEntry *E = C.lookup(P);
      T.NotInCache += !E;
      std::optional<double> V = E ? E->TimeMs : std::nullopt;
      S.observe(P, V);
      T.add(std::move(P), V);
    }
  }
  return T;
}

std::optional<size_t> evaluationsToWithin(const SimulationTrace &T,
                                          double Optimum, double Percent) {
  double Limit = Optimum + std::abs(Optimum) * Percent / 100;
  for (size_t I = 0; I < T.Evaluations.size(); ++I) {
    const std::optional<double> &B = T.Evaluations[I].BestSoFar;
    if (B && *B <= Limit)
      return I + 1;
  }
  return std::nullopt;
}

std::optional<double> bestAt(const SimulationTrace &T, size_t K) {
  if (K == 0)
    return std::nullopt;
  if (K <= T.Evaluations.size())
    return T.Evaluations[K - 1].BestSoFar;
  return T.Exhausted ? T.best() : std::nullopt;
}

} // namespace r3::search
