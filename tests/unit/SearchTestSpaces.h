// Small synthetic search problems with known optima, shared by the strategy
// and Bayesian-optimization tests.
#pragma once

#include "search/Space.h"
#include "search/Strategy.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string>

namespace r3::search::testing {

inline Param ordinalParam(std::string Name, unsigned N) {
  Param P;
  P.Name = std::move(Name);
  P.Kind = ParamKind::Ordinal;
  for (unsigned I = 0; I < N; ++I)
    P.Values.push_back(std::to_string(I));
  return P;
}

inline Param categoricalParam(std::string Name, unsigned N) {
  Param P = ordinalParam(std::move(Name), N);
  P.Kind = ParamKind::Categorical;
  return P;
}

inline Param sequenceParam(std::string Name, unsigned Alphabet, unsigned Max) {
  Param P = ordinalParam(std::move(Name), Alphabet);
  P.Kind = ParamKind::Sequence;
  P.MaxLength = Max;
  return P;
}

using Objective = std::function<std::optional<double>(const Point &)>;

/// The result of running a strategy for a budget.
struct Run {
  unsigned Evaluations = 0, Failures = 0, Duplicates = 0, Invalid = 0;
  std::optional<double> Best;
  std::optional<unsigned> FoundAt; ///< evaluations until Best <= Target
};

/// Runs S for Budget evaluations in batches of Batch, observing F.
inline Run runStrategy(Strategy &S, const Space &Sp, const Objective &F,
                       unsigned Budget, unsigned Batch, double Target) {
  Run Out;
  std::set<Point> Seen;
  while (Out.Evaluations < Budget) {
    std::vector<Point> Ps =
        S.propose(std::min(Batch, Budget - Out.Evaluations));
    if (Ps.empty())
      break;
    for (const Point &P : Ps) {
      Out.Invalid += !Sp.contains(P);
      Out.Duplicates += !Seen.insert(P).second;
      std::optional<double> V = F(P);
      ++Out.Evaluations;
      Out.Failures += !V;
      if (V && (!Out.Best || *V < *Out.Best))
        Out.Best = V;
      if (V && *V <= Target && !Out.FoundAt)
        Out.FoundAt = Out.Evaluations;
      S.observe(P, V);
    }
  }
  return Out;
}

/// A smooth bowl over ordinal parameters with its minimum 1.0 at Centre, so
/// that "within 1% of the optimum" means at the centre.
inline Objective bowl(std::vector<double> Centre) {
  return [Centre](const Point &P) -> std::optional<double> {
    double F = 1;
    for (size_t I = 0; I < Centre.size(); ++I) {
      double D = P.Values[I][0] - Centre[I];
      F += 0.05 * D * D + 0.02 * std::abs(D);
    }
    return F;
  };
}

} // namespace r3::search::testing
