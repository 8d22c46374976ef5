// A steady-state genetic algorithm: the search that finds sharp, isolated
// optima which a smooth surrogate model averages away. Its parents are the
// best points observed so far, whoever proposed them (in a portfolio, the
// Bayesian optimizer's finds breed too); a child takes each parameter from
// one parent or the other (uniform crossover; Syswerda 1989) and, one time
// in five, mutates (a child that was already seen always does): a parameter
// jumps to any value of its domain (a Hamming step, as
// Kernel Tuner's genetic algorithm mutates; Schoonhoven et al., "Benchmarking
// optimization algorithms for auto-tuning GPU kernels", IEEE TEVC 2022,
// compare it with the other strategies on GPU kernels) or, for ordinals, to
// a neighbouring value; a pass sequence takes one edit.
// Parents are drawn by rank with a bias to the best (a linearly decreasing
// density over the ranks), which keeps the population diverse without
// fitness scaling, so the times' units do not matter.
//
// In a constrained space (a tuning cache's valid points) a child that is
// not allowed is repaired to a random allowed point whose every ordinal is
// within one step of the child's (Kernel Tuner's "strictly adjacent"
// neighbours, which its genetic algorithm repairs with); when there is none,
// to the nearest unseen allowed point by weighted Hamming distance (an
// ordinal's distance is its index difference over its range). The repair
// is also a mutation: it moves several parameters by a step each, and on a
// convolution cache it raised how often the isolated optimum was found from
// 5 to 10 runs of 20 (bench/search-sim).
// Mutating every child hid the optimum of a convolution cache, one point
// whose two best neighbours cross over into it: with one child in five
// mutated, the portfolio reached it in 65 runs of 100 instead of 55
// (bench/search-sim; 61 with one in twenty, 56 with one in two).
// A child that was already observed or is pending mutates again, harder,
// until it is new; a population that can breed nothing new falls back to a
// random point. Failed points never become parents.
#include "search/Strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace r3::search {

namespace {

class Genetic final : public Strategy {
public:
  Genetic(const Space &S, const StrategyOptions &O)
      : S(S), R(O.Seed ^ 0x9e3779b97f4a7c15ULL),
        Initial(O.InitialSamples ? O.InitialSamples : 10) {}

  std::string_view name() const override { return "ga"; }

  std::vector<Point> propose(unsigned N) override {
    std::vector<Point> Out;
    std::vector<Point> Parents = population();
    for (unsigned I = 0; I < N; ++I) {
      std::optional<Point> P =
          Parents.size() >= 2 && Ok >= Initial ? breed(Parents) : std::nullopt;
      if (!P)
        P = randomUnseen();
      if (!P)
        break;
      Obs.markPending(*P);
      Out.push_back(std::move(*P));
    }
    return Out;
  }

  void observe(const Point &P, std::optional<double> Value) override {
    Obs.observe(P, Value);
    Ok += Value && *Value > 0;
  }
  void markPending(const Point &P) override { Obs.markPending(P); }
  void forget(const Point &P) override { Obs.forget(P); }

private:
  /// The PopulationSize best successful points, best first.
  std::vector<Point> population() const {
    std::vector<std::pair<double, const Point *>> Ranked;
    for (const auto &E : Obs.entries())
      if (E.Value && *E.Value > 0)
        Ranked.emplace_back(*E.Value, &E.P);
    size_t K = std::min<size_t>(PopulationSize, Ranked.size());
    std::partial_sort(Ranked.begin(), Ranked.begin() + K, Ranked.end());
    std::vector<Point> Out;
    for (size_t I = 0; I < K; ++I)
      Out.push_back(*Ranked[I].second);
    return Out;
  }

  /// A rank in [0, N) drawn with density falling linearly from the best.
  size_t rank(size_t N) {
    double U = std::uniform_real_distribution<double>(0, 1)(R);
    return std::min(N - 1, static_cast<size_t>(N * (1 - std::sqrt(U))));
  }

  /// A new child of two distinct parents, or none after many tries.
  std::optional<Point> breed(const std::vector<Point> &Parents) {
    for (unsigned Try = 0; Try < 64; ++Try) {
      size_t A = rank(Parents.size()), B = rank(Parents.size());
      while (B == A)
        B = rank(Parents.size());
      Point Child = crossover(Parents[A], Parents[B]);
      // Harder mutation as tries fail: the population's neighbourhood is
      // being used up.
      // A first child mutates only now and then (FirstMutation): the
      // crossover of two good points is often the better point itself,
      // and a forced mutation would move it away again. A child that is
      // already known mutates on the next tries.
      if (Try > 0 || std::bernoulli_distribution(FirstMutation)(R))
        mutate(Child, 1 + Try / 8);
      if (!S.Allowed.empty() && !S.contains(Child)) {
        std::optional<Point> Fixed = repair(Child);
        if (!Fixed)
          continue;
        Child = std::move(*Fixed);
      }
      if (!Obs.seen(Child))
        return Child;
    }
    return std::nullopt;
  }

  Point crossover(const Point &A, const Point &B) {
    Point C = A;
    std::bernoulli_distribution Coin(0.5);
    for (size_t I = 0; I < C.Values.size(); ++I)
      if (Coin(R))
        C.Values[I] = B.Values[I];
    return C;
  }

  /// Mutates each parameter that can change with a small probability that
  /// grows with Strength (MutationRate spread over the parameters at
  /// strength 1), and one of them when none was hit: children stay near
  /// their parents, which in a population of good points is where better
  /// ones are.
  void mutate(Point &P, unsigned Strength) {
    std::vector<size_t> Free;
    for (size_t I = 0; I < S.Params.size(); ++I)
      if (S.Params[I].Kind == ParamKind::Sequence ||
          S.Params[I].Values.size() > 1)
        Free.push_back(I);
    if (Free.empty())
      return;
    std::bernoulli_distribution Hit(
        std::min(1.0, MutationRate * Strength / Free.size()));
    bool Any = false;
    for (size_t I : Free)
      if (Hit(R)) {
        mutateParam(P, I);
        Any = true;
      }
    if (!Any)
      mutateParam(
          P,
          Free[std::uniform_int_distribution<size_t>(0, Free.size() - 1)(R)]);
  }

  void mutateParam(Point &P, size_t I) {
    const Param &Par = S.Params[I];
    std::vector<uint32_t> &V = P.Values[I];
    size_t N = Par.Values.size();
    if (N < 2 && Par.Kind != ParamKind::Sequence)
      return;
    if (Par.Kind == ParamKind::Sequence) {
      mutateSequence(Par, V);
      return;
    }
    bool Step =
        Par.Kind == ParamKind::Ordinal && std::bernoulli_distribution(0.3)(R);
    if (Step) {
      bool Up =
          V[0] == 0 || (V[0] + 1 < N && std::bernoulli_distribution(0.5)(R));
      V[0] = Up ? V[0] + 1 : V[0] - 1;
      return;
    }
    uint32_t X = std::uniform_int_distribution<uint32_t>(0, N - 2)(R);
    V[0] = X >= V[0] ? X + 1 : X; // any value but the current one
  }

  /// One edit of a pass sequence: insert, remove or replace an entry.
  void mutateSequence(const Param &Par, std::vector<uint32_t> &V) {
    size_t Alphabet = Par.Values.size();
    if (Alphabet == 0)
      return;
    auto Pick = [&](size_t N) {
      return std::uniform_int_distribution<size_t>(0, N - 1)(R);
    };
    uint32_t Entry = static_cast<uint32_t>(Pick(Alphabet));
    bool CanGrow = V.size()<Par.MaxLength, CanShrink = V.size()> Par.MinLength;
    unsigned Kind = static_cast<unsigned>(Pick(3));
    if (Kind == 0 && CanGrow)
      V.insert(V.begin() + Pick(V.size() + 1), Entry);
    else if (Kind == 1 && CanShrink)
      V.erase(V.begin() + Pick(V.size()));
    else if (!V.empty())
      V[Pick(V.size())] = Entry;
    else if (CanGrow)
      V.push_back(Entry);
  }

  /// A random allowed point whose every parameter is within one step of
  /// P's (the "strictly adjacent" box); else the nearest unseen allowed one.
  std::optional<Point> repair(const Point &P) {
    std::vector<const Point *> Box;
    if (const uint32_t *Rows = S.Allowed.rows(); Rows && fitsRows(P)) {
      // The same scan over rows of integers (most of a GA's time on a
      // tuning cache of tens of thousands of points).
      size_t W = S.Allowed.rowWidth();
      for (size_t J = 0; J < S.Allowed.size(); ++J)
        if (withinBoxRow(P, Rows + J * W))
          Box.push_back(&S.Allowed[J]);
    } else {
      for (const Point &Q : S.Allowed)
        if (withinBox(P, Q))
          Box.push_back(&Q);
    }
    if (!Box.empty())
      return *Box[std::uniform_int_distribution<size_t>(0, Box.size() - 1)(R)];
    return nearest(P);
  }

  /// Whether P has one value per parameter, as the rows of Allowed do.
  bool fitsRows(const Point &P) const {
    if (P.Values.size() != S.Allowed.rowWidth())
      return false;
    for (const auto &V : P.Values)
      if (V.size() != 1)
        return false;
    return true;
  }

  /// withinBox against a row of Allowed.
  bool withinBoxRow(const Point &A, const uint32_t *B) const {
    for (size_t I = 0; I < S.Params.size(); ++I) {
      uint32_t X = A.Values[I][0];
      if (X == B[I])
        continue;
      if (S.Params[I].Kind != ParamKind::Ordinal ||
          (X > B[I] ? X - B[I] : B[I] - X) > 1)
        return false;
    }
    return true;
  }

  bool withinBox(const Point &A, const Point &B) const {
    for (size_t I = 0; I < S.Params.size(); ++I) {
      if (A.Values[I] == B.Values[I])
        continue;
      if (S.Params[I].Kind != ParamKind::Ordinal)
        return false;
      if (std::abs(static_cast<long>(A.Values[I][0]) - B.Values[I][0]) > 1)
        return false;
    }
    return true;
  }

  std::optional<Point> nearest(const Point &P) {
    double Best = std::numeric_limits<double>::infinity();
    std::vector<const Point *> Ties;
    const uint32_t *Rows = fitsRows(P) ? S.Allowed.rows() : nullptr;
    size_t W = S.Allowed.rowWidth();
    for (size_t J = 0; J < S.Allowed.size(); ++J) {
      const Point &Q = S.Allowed[J];
      double D = Rows ? distanceRow(P, Rows + J * W) : distance(P, Q);
      if (D > Best || Obs.seen(Q))
        continue;
      if (D < Best)
        Ties.clear();
      Best = D;
      Ties.push_back(&Q);
    }
    if (Ties.empty())
      return std::nullopt;
    return *Ties[std::uniform_int_distribution<size_t>(0, Ties.size() - 1)(R)];
  }

  /// distance against a row of Allowed.
  double distanceRow(const Point &A, const uint32_t *B) const {
    double D = 0;
    for (size_t I = 0; I < S.Params.size(); ++I) {
      const Param &Par = S.Params[I];
      uint32_t X = A.Values[I][0];
      if (X == B[I])
        continue;
      if (Par.Kind == ParamKind::Ordinal && Par.Values.size() > 1)
        D += std::abs(static_cast<double>(X) - B[I]) /
             (Par.Values.size() - 1);
      else
        D += 1;
    }
    return D;
  }

  double distance(const Point &A, const Point &B) const {
    double D = 0;
    for (size_t I = 0; I < S.Params.size(); ++I) {
      const Param &Par = S.Params[I];
      if (A.Values[I] == B.Values[I])
        continue;
      if (Par.Kind == ParamKind::Ordinal && Par.Values.size() > 1)
        D += std::abs(static_cast<double>(A.Values[I][0]) - B.Values[I][0]) /
             (Par.Values.size() - 1);
      else
        D += 1;
    }
    return D;
  }

  /// A random point never seen, or none when random draws keep hitting seen
  /// points (the space is nearly exhausted; the enumeration then finds the
  /// rest when the space can be listed).
  std::optional<Point> randomUnseen() {
    for (unsigned Try = 0; Try < 1000; ++Try) {
      Point P = S.random(R);
      if (!Obs.seen(P))
        return P;
    }
    if (S.enumerable(1e5))
      for (Point &P : S.enumerate())
        if (!Obs.seen(P))
          return P;
    return std::nullopt;
  }

  /// Small populations converge fast enough for budgets of a few hundred
  /// evaluations; 12 and a low mutation rate found a convolution cache's
  /// isolated optimum most often among the settings tried (8 to 40
  /// parents, rates 0.25 to 1; bench/search-sim, 60 seeds).
  static constexpr size_t PopulationSize = 12;
  static constexpr double MutationRate = 0.25;
  static constexpr double FirstMutation = 0.2;
  const Space &S;
  Rng R;
  unsigned Initial;
  unsigned Ok = 0;
  Observations Obs;
};

} // namespace

std::unique_ptr<Strategy> makeGenetic(const Space &S,
                                      const StrategyOptions &O) {
  return std::make_unique<Genetic>(S, O);
}

} // namespace r3::search
