// The tree-structured Parzen estimator (Bergstra, Bardenet, Bengio and Kégl,
// "Algorithms for hyper-parameter optimization", NIPS 2011), the strategy of
// Optuna and Hyperopt: the observations are split into the best fraction
// ("good") and the rest plus every failure ("bad"); each parameter gets one
// smoothed distribution over its values from each group, and the next point
// maximises l(x) / g(x), the ratio of its likelihood under the good model to
// that under the bad one, among candidates drawn from the good model.
// Parameters are modelled independently (the "tree" is flat here): ordinals
// with a discrete Gaussian kernel over their indices, categoricals with
// smoothed counts, pass sequences by their length and their bag of passes.
#include "search/Strategy.h"

#include <algorithm>
#include <cmath>

namespace r3::search {

namespace {

/// A smoothed distribution over one parameter, built from some points.
class ParamDensity {
public:
  ParamDensity(const Param &P, const std::vector<const Point *> &Pts,
               size_t Index)
      : P(P) {
    size_t N = P.Values.size();
    Mass.assign(N, 1.0 / std::max<size_t>(N, 1)); // the uniform prior
    Lengths.assign(P.MaxLength + 1, 1.0 / (P.MaxLength + 1));
    double Width = std::max(1.0, static_cast<double>(N) / 8);
    for (const Point *Q : Pts)
      add(Q->Values[Index], Width);
    normalise(Mass);
    normalise(Lengths);
  }

  double logLikelihood(const std::vector<uint32_t> &V) const {
    if (P.Kind != ParamKind::Sequence)
      return std::log(Mass[V[0]]);
    double L = std::log(Lengths[V.size()]);
    for (uint32_t E : V)
      L += std::log(Mass[E]);
    return L;
  }

  std::vector<uint32_t> sample(Rng &R) const {
    std::discrete_distribution<uint32_t> Value(Mass.begin(), Mass.end());
    if (P.Kind != ParamKind::Sequence)
      return {Value(R)};
    std::vector<double> L(Lengths.begin() + P.MinLength, Lengths.end());
    unsigned Length = P.MinLength + std::discrete_distribution<unsigned>(
                                        L.begin(), L.end())(R);
    std::vector<uint32_t> V;
    for (unsigned K = 0; K < Length; ++K)
      V.push_back(Value(R));
    return V;
  }

private:
  void add(const std::vector<uint32_t> &V, double Width) {
    if (P.Kind == ParamKind::Categorical) {
      Mass[V[0]] += 1;
    } else if (P.Kind == ParamKind::Ordinal) {
      for (size_t K = 0; K < Mass.size(); ++K) {
        double D = (static_cast<double>(K) - V[0]) / Width;
        Mass[K] += std::exp(-0.5 * D * D);
      }
    } else {
      Lengths[V.size()] += 1;
      for (uint32_t E : V)
        Mass[E] += 1.0 / V.size();
    }
  }

  static void normalise(std::vector<double> &M) {
    double Sum = 0;
    for (double X : M)
      Sum += X;
    for (double &X : M)
      X /= Sum > 0 ? Sum : 1;
  }

  const Param &P;
  std::vector<double> Mass, Lengths;
};

class Tpe final : public Strategy {
public:
  Tpe(const Space &S, const StrategyOptions &O)
      : S(S), R(O.Seed), Initial(O.InitialSamples ? O.InitialSamples : 10),
        Fallback(makeRandomSearch(S, O)) {}

  std::string_view name() const override { return "tpe"; }

  std::vector<Point> propose(unsigned N) override {
    std::vector<Point> Out;
    if (Obs.entries().size() >= Initial)
      Out = modelPoints(N);
    // The initial design, and whatever the model could not fill (a nearly
    // exhausted space), come from random search.
    while (Out.size() < N) {
      std::vector<Point> More = Fallback->propose(N - Out.size());
      size_t Before = Out.size();
      for (Point &P : More)
        if (!Obs.seen(P) && std::find(Out.begin(), Out.end(), P) == Out.end())
          Out.push_back(std::move(P));
      if (More.empty() || Out.size() == Before)
        break;
    }
    for (const Point &P : Out) {
      Obs.markPending(P);
      Fallback->markPending(P);
    }
    return Out;
  }

  void observe(const Point &P, std::optional<double> Value) override {
    Obs.observe(P, Value);
    Fallback->observe(P, Value);
  }
  void markPending(const Point &P) override {
    Obs.markPending(P);
    Fallback->markPending(P);
  }
  void forget(const Point &P) override {
    Obs.forget(P);
    Fallback->forget(P);
  }

private:
  /// Splits the observations: the best gamma(n) successes are good (as in
  /// Optuna: a tenth, at least one, at most 25); the rest and failures bad.
  void split(std::vector<const Point *> &Good,
             std::vector<const Point *> &Bad) const {
    std::vector<std::pair<double, const Point *>> Ok;
    for (const auto &E : Obs.entries()) {
      if (E.Value)
        Ok.emplace_back(*E.Value, &E.P);
      else
        Bad.push_back(&E.P);
    }
    std::sort(Ok.begin(), Ok.end());
    size_t NGood = std::clamp<size_t>((Ok.size() + 9) / 10, 1, 25);
    for (size_t I = 0; I < Ok.size(); ++I)
      (I < NGood ? Good : Bad).push_back(Ok[I].second);
  }

  std::vector<Point> candidates(const std::vector<ParamDensity> &L,
                                unsigned Count) {
    std::vector<Point> Out;
    for (unsigned I = 0; I < Count; ++I) {
      if (!S.Allowed.empty()) {
        Out.push_back(S.random(R)); // constrained: score valid points only
        continue;
      }
      Point P;
      for (const ParamDensity &D : L)
        P.Values.push_back(D.sample(R));
      Out.push_back(std::move(P));
    }
    return Out;
  }

  std::vector<Point> modelPoints(unsigned N) {
    std::vector<const Point *> Good, Bad;
    split(Good, Bad);
    if (Good.empty())
      return {};
    std::vector<ParamDensity> L, G;
    for (size_t I = 0; I < S.Params.size(); ++I) {
      L.emplace_back(S.Params[I], Good, I);
      G.emplace_back(S.Params[I], Bad, I);
    }
    std::vector<std::pair<double, Point>> Scored;
    for (Point &P : candidates(L, 48 * N)) {
      if (Obs.seen(P))
        continue;
      double Score = 0;
      for (size_t I = 0; I < S.Params.size(); ++I)
        Score +=
            L[I].logLikelihood(P.Values[I]) - G[I].logLikelihood(P.Values[I]);
      Scored.emplace_back(Score, std::move(P));
    }
    std::sort(Scored.begin(), Scored.end(),
              [](const auto &A, const auto &B) { return A.first > B.first; });
    std::vector<Point> Out;
    for (auto &[Score, P] : Scored)
      if (Out.size() < N && std::find(Out.begin(), Out.end(), P) == Out.end())
        Out.push_back(std::move(P));
    return Out;
  }

  const Space &S;
  Rng R;
  unsigned Initial;
  Observations Obs;
  std::unique_ptr<Strategy> Fallback;
};

} // namespace

std::unique_ptr<Strategy> makeTpe(const Space &S, const StrategyOptions &O) {
  return std::make_unique<Tpe>(S, O);
}

} // namespace r3::search
