// Bayesian optimization, the default inner-loop strategy: a Gaussian process
// (bo/Gp.h) models the logarithm of the run time over an encoding of the
// space, and the next points maximise expected improvement (Jones, Schonlau
// and Welch, "Efficient global optimization of expensive black-box
// functions", 1998) times the probability that the point does not fail;
// proposals take turns with the probability of improvement and the lower
// confidence bound (a fixed portfolio, after GP-Hedge), which found the
// optimum of a GEMM tuning cache in 70 evaluations on average where EI
// alone needed 84 (bench/search-sim, 20 seeds).
//
// - Encoding. Ordinal parameters map to [0, 1] by their index (block sizes
//   are powers of two, so the index is their logarithm); categorical ones to
//   one-hot blocks scaled so that any change has distance 1; a pass sequence
//   to its pass counts and its length, so that pipelines that share passes
//   are near each other and one edit is a short step (a bag-of-words view of
//   sequences, as in kernel methods for strings; cf. Lodhi et al. 2002).
// - Failures. A point that fails to compile, crashes or gives a wrong result
//   has no time. A second GP regresses the failure indicator over the same
//   encoding, and the acquisition is multiplied by the predicted probability
//   of success, so that invalid regions are learned and avoided (the
//   feasibility weighting of Gelbart, Snoek and Adams 2014).
// - Batches. Workers run several candidates at once, so proposals come in
//   batches chosen by the kriging believer heuristic (Ginsbourger, Le Riche
//   and Carraro 2010): each chosen or pending point enters the model with its
//   predicted mean before the next one is chosen.
// - Acquisition optimisation. The space is discrete and often huge (pass
//   sequences), so EI is maximised over a pool: every unseen point when the
//   space is small, otherwise random points plus the neighbourhoods of the
//   best observed points, then a short hill climb over neighbours from the
//   best candidates (as SMAC does; Hutter, Hoos and Leyton-Brown 2011).
// - Relevance. With LengthScales::PerParameter (the portfolio's BO), each
//   parameter's features get a weight of their own, chosen by marginal
//   likelihood after the shared length scale (automatic relevance
//   determination; Rasmussen and Williams 2006, section 5.1): a parameter
//   whose every step changes the time, such as a block size on a rugged
//   space, is modelled at a short range, and an irrelevant one is ignored.
//   Plain `bo` keeps one length scale: on a GEMM cache that reached the
//   optimum sooner (76 against 121 evaluations on average, 20 seeds).
// - Noise. Timings are noisy; the GP's noise variance is a hyperparameter
//   chosen by marginal likelihood, so repeated near-equal times do not
//   collapse the model.
// - Scale. An exact GP costs the cube of its points at every fit and the
//   square for every point it scores, so beyond 256 observations the models
//   see the 128 fastest points and the 128 most recent others
//   (modelEntries): a local model of where the search is good and where it
//   is now. Each new observation moves that window by a row or two, and
//   the GP changes its factor by as much instead of making it again
//   (Gp::fit), so a long inner loop keeps proposing in a few milliseconds
//   while its GPUs wait (bench/proposal-cost; with 512 points a proposal
//   took over 50 ms).
#include "search/Strategy.h"
#include "search/bo/Gp.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace r3::search {

namespace {

using bo::Vector;

/// The feature vector of a point (see the file comment).
class Encoder {
public:
  explicit Encoder(const Space &S) : S(S) {}

  /// Per parameter, the feature columns its encoding occupies.
  bo::FeatureGroups groups() const {
    bo::FeatureGroups Out;
    size_t Col = 0;
    for (const Param &Par : S.Params) {
      size_t Width = Par.Kind == ParamKind::Ordinal ? 1
                     : Par.Kind == ParamKind::Categorical
                         ? Par.Values.size()
                         : Par.Values.size() + 1;
      std::vector<size_t> G;
      for (size_t K = 0; K < Width; ++K)
        G.push_back(Col++);
      Out.push_back(std::move(G));
    }
    return Out;
  }

  Vector encode(const Point &P) const {
    Vector X;
    for (size_t I = 0; I < S.Params.size(); ++I)
      append(S.Params[I], P.Values[I], X);
    return X;
  }

private:
  static void append(const Param &Par, const std::vector<uint32_t> &V,
                     Vector &X) {
    size_t N = Par.Values.size();
    switch (Par.Kind) {
    case ParamKind::Ordinal:
      X.push_back(N > 1 ? static_cast<double>(V[0]) / (N - 1) : 0);
      return;
    case ParamKind::Categorical:
      for (size_t K = 0; K < N; ++K)
        X.push_back(K == V[0] ? std::sqrt(0.5) : 0);
      return;
    case ParamKind::Sequence: {
      double Scale = 1.0 / std::max(1u, Par.MaxLength);
      size_t Start = X.size();
      X.resize(Start + N, 0);
      for (uint32_t E : V)
        X[Start + E] += std::sqrt(0.5);
      X.push_back(static_cast<double>(V.size()) * Scale);
      return;
    }
    }
  }

  const Space &S;
};

class BayesOpt final : public Strategy {
public:
  BayesOpt(const Space &S, const StrategyOptions &O)
      : S(S), R(O.Seed), Enc(S),
        Initial(O.InitialSamples ? O.InitialSamples : 8), Scales(O.Scales) {}

  std::string_view name() const override { return "bo"; }

  std::vector<Point> propose(unsigned N) override {
    // Asked for none (a portfolio whose GA has every slot), it returns at
    // once: fitting the models and scoring the pool would be most of a
    // proposal's cost, for nothing.
    if (N == 0)
      return {};
    std::vector<Point> Out;
    if (successes() < Initial)
      Out = randomPoints(N);
    else
      Out = modelPoints(N);
    for (const Point &P : Out)
      Obs.markPending(P);
    return Out;
  }

  void observe(const Point &P, std::optional<double> Value) override {
    Obs.observe(P, Value);
  }

  std::vector<double> score(const std::vector<Point> &Ps) override {
    if (successes() < Initial || Ps.empty())
      return {};
    fitModels();
    for (const Point &P : Obs.pending()) {
      Vector X = Enc.encode(P);
      TimeModel.add(X, TimeModel.predict(X).Mean);
    }
    unsigned Saved = Choice;
    Choice = 0; // expected improvement
    std::vector<double> Out = acquisitions(Ps);
    Choice = Saved;
    return Out;
  }
  void markPending(const Point &P) override { Obs.markPending(P); }
  void forget(const Point &P) override { Obs.forget(P); }

private:
  unsigned successes() const {
    unsigned N = 0;
    for (const auto &E : Obs.entries())
      N += E.Value && *E.Value > 0;
    return N;
  }

  /// Unseen points drawn at random (the initial design); falls back to the
  /// model-free pool when random draws keep hitting seen points.
  std::vector<Point> randomPoints(unsigned N) {
    std::vector<Point> Out;
    std::set<Point> Chosen;
    for (unsigned Try = 0; Out.size() < N && Try < 200 * N; ++Try) {
      Point P = S.random(R);
      if (!Obs.seen(P) && Chosen.insert(P).second)
        Out.push_back(std::move(P));
    }
    if (Out.size() < N && S.enumerable(SmallSpace))
      for (Point &P : S.enumerate())
        if (Out.size() < N && !Obs.seen(P) && Chosen.insert(P).second)
          Out.push_back(std::move(P));
    return Out;
  }

  /// The observations the models are fitted to: all of them up to
  /// MaxModelPoints; beyond, the BestKept fastest and the most recent
  /// others. An exact GP costs the cube of its points at every proposal,
  /// which at a few thousand observations (a long campaign's one inner
  /// loop) would keep the coordinator busy for seconds while GPUs wait;
  /// the best points keep the good region modelled, the recent ones where
  /// the search is now.
  std::vector<const Observations::Entry *> modelEntries() const {
    const auto &All = Obs.entries();
    std::vector<const Observations::Entry *> Out;
    if (All.size() <= MaxModelPoints) {
      for (const auto &E : All)
        Out.push_back(&E);
      return Out;
    }
    std::vector<size_t> Ok;
    for (size_t I = 0; I < All.size(); ++I)
      if (All[I].Value && *All[I].Value > 0)
        Ok.push_back(I);
    size_t Best = std::min<size_t>(BestKept, Ok.size());
    std::partial_sort(
        Ok.begin(), Ok.begin() + Best, Ok.end(),
        [&](size_t A, size_t B) { return *All[A].Value < *All[B].Value; });
    std::vector<bool> Taken(All.size(), false);
    for (size_t I = 0; I < Best; ++I)
      Taken[Ok[I]] = true;
    size_t Left = MaxModelPoints - Best;
    for (size_t I = All.size(); I-- > 0 && Left > 0;)
      if (!Taken[I]) {
        Taken[I] = true;
        --Left;
      }
    for (size_t I = 0; I < All.size(); ++I)
      if (Taken[I])
        Out.push_back(&All[I]);
    return Out;
  }

  /// The models fitted to what was observed, without believed points.
  /// Nothing is factored again while no observation arrived since the last
  /// fit (a portfolio scores the GA's children with BO and has BO propose
  /// in the same round): the models of that fit are restored.
  void fitModels() {
    size_t Seen = Obs.entries().size();
    if (Fitted && Fitted->Seen == Seen) {
      TimeModel = Fitted->Time;
      FailModel = Fitted->Fail;
      return;
    }
    fitAnew();
    Fitted = FittedModels{Seen, TimeModel, FailModel};
  }

  /// Fits the time model and the failure model to what was observed (see
  /// modelEntries). Failed points also enter the time model, at the worst
  /// time seen: without them the model is most uncertain, so most
  /// attractive, exactly where points fail.
  void fitAnew() {
    std::vector<Vector> X, XFailed;
    Vector Y, Fail;
    std::vector<Vector> XAll;
    for (const Observations::Entry *E : modelEntries()) {
      Vector V = features(*E);
      bool Ok = E->Value && *E->Value > 0;
      if (Ok) {
        X.push_back(V);
        Y.push_back(std::log(*E->Value));
      } else {
        XFailed.push_back(V);
      }
      XAll.push_back(std::move(V));
      Fail.push_back(Ok ? 0.0 : 1.0);
    }
    BestLog = *std::min_element(Y.begin(), Y.end());
    double WorstLog = *std::max_element(Y.begin(), Y.end());
    for (Vector &V : XFailed) {
      X.push_back(std::move(V));
      Y.push_back(WorstLog);
    }
    // The hyperparameter grid is searched again when the observations grew
    // by a fifth since the last search; in between they are kept (cheaper,
    // and the fit barely moves). The failure model's grid is searched when
    // the first failure appears and then with the time model's.
    size_t Seen = Obs.entries().size();
    bool Search = !Hyper || Seen >= HyperAt * 6 / 5 + 1;
    if (Search) {
      TimeModel.fit(X, Y);
      if (Scales == LengthScales::PerParameter)
        TimeModel.fitRelevance(Enc.groups());
      Hyper = TimeModel.hyper();
      HyperAt = Seen;
    } else {
      TimeModel.fit(X, Y, &*Hyper);
    }
    HasFailures = !XFailed.empty();
    if (!HasFailures)
      return;
    if (Search || !FailHyper) {
      FailModel.fit(XAll, Fail);
      FailHyper = FailModel.hyper();
    } else {
      FailModel.fit(XAll, Fail, &*FailHyper);
    }
  }

  /// The encoding of an observed point, computed once: every refit reads
  /// the encodings of its 256 points. Entries are only appended (a point
  /// observed again keeps its place), so an entry's position is its key.
  const Vector &features(const Observations::Entry &E) {
    size_t I = static_cast<size_t>(&E - Obs.entries().data());
    while (EntryFeatures.size() <= I)
      EntryFeatures.push_back(
          Enc.encode(Obs.entries()[EntryFeatures.size()].P));
    return EntryFeatures[I];
  }

  /// The acquisition values of Ps (higher is better) under the current
  /// choice of function (see Choice), predicted together: one pass over
  /// the models' factors serves a block of points.
  std::vector<double> acquisitions(const std::vector<Point> &Ps) const {
    std::vector<Vector> Xs;
    Xs.reserve(Ps.size());
    for (const Point &P : Ps)
      Xs.push_back(Enc.encode(P));
    std::vector<bo::Prediction> Pr = TimeModel.predictMany(Xs);
    std::vector<double> POk = successOdds(Xs);
    std::vector<double> Out(Ps.size());
    for (size_t I = 0; I < Ps.size(); ++I)
      Out[I] = acquisition(Pr[I], POk[I]);
    return Out;
  }

  /// The predicted probability that each of Xs does not fail.
  std::vector<double> successOdds(const std::vector<Vector> &Xs) const {
    std::vector<double> Out(Xs.size(), 1.0);
    if (!HasFailures)
      return Out;
    std::vector<double> Fail = FailModel.means(Xs);
    for (size_t I = 0; I < Xs.size(); ++I)
      Out[I] = 1 - std::clamp(Fail[I], 0.0, 0.98);
    return Out;
  }

  /// The acquisition value of a prediction whose point succeeds with
  /// probability POk.
  double acquisition(const bo::Prediction &Pr, double POk) const {
    double Sd = std::sqrt(std::max(Pr.Variance, 0.0));
    switch (Choice % 3) {
    case 0:
      return bo::expectedImprovement(Pr, BestLog, 0.002) * POk;
    case 1: // probability of improvement by 1%
      return (Sd > 0 ? 0.5 * std::erfc(-(BestLog - 0.01 - Pr.Mean) /
                                       (Sd * std::sqrt(2.0)))
                     : 0.0) *
             POk;
    default: // lower confidence bound; failing regions pay a penalty
      return -(Pr.Mean - 1.5 * Sd) - 10 * (1 - POk);
    }
  }

  /// The candidates EI is maximised over (see the file comment).
  std::vector<Point> pool() {
    std::vector<Point> Out;
    auto Usable = [&](const Point &P) { return !Obs.seen(P); };
    if (S.enumerable(SmallSpace)) {
      for (Point &P : S.enumerate())
        if (Usable(P))
          Out.push_back(std::move(P));
      return Out;
    }
    std::set<Point> Unique;
    for (unsigned I = 0; I < PoolSize; ++I) {
      Point P = S.random(R);
      if (Usable(P) && Unique.insert(P).second)
        Out.push_back(std::move(P));
    }
    std::vector<Point> Best = bestObserved(4);
    for (const Point &B : Best)
      for (Point &P : S.neighbours(B))
        if (Usable(P) && Unique.insert(P).second)
          Out.push_back(std::move(P));
    // Two steps around the best point: good configurations cluster, and
    // the best is often two changes away from the best seen.
    if (!Best.empty())
      for (const Point &Q : S.neighbours(Best.front()))
        for (Point &P : S.neighbours(Q))
          if (Usable(P) && Unique.insert(P).second)
            Out.push_back(std::move(P));
    return Out;
  }

  std::vector<Point> bestObserved(size_t K) const {
    std::vector<std::pair<double, Point>> Ok;
    for (const auto &E : Obs.entries())
      if (E.Value && *E.Value > 0)
        Ok.emplace_back(*E.Value, E.P);
    std::sort(Ok.begin(), Ok.end());
    std::vector<Point> Out;
    for (size_t I = 0; I < Ok.size() && I < K; ++I)
      Out.push_back(Ok[I].second);
    return Out;
  }

  /// The pool a batch of proposals is chosen from, with its posteriors
  /// kept current as the batch's chosen points enter the model.
  struct ScoredPool {
    std::vector<Point> Points;
    bo::Gp::Tracked Time;
    std::vector<double> POk; ///< the failure model is not updated in a batch
  };

  /// The best point of the pool, improved by a short hill climb over
  /// neighbours when the space is too large to score whole.
  std::optional<Point> bestCandidate(ScoredPool &Pool,
                                     const std::set<Point> &Chosen) {
    TimeModel.refresh(Pool.Time);
    std::vector<std::pair<double, size_t>> Scored;
    for (size_t I = 0; I < Pool.Points.size(); ++I)
      if (!Chosen.count(Pool.Points[I]))
        Scored.emplace_back(
            acquisition(TimeModel.at(Pool.Time, I), Pool.POk[I]), I);
    if (Scored.empty())
      return std::nullopt;
    size_t Top = std::min<size_t>(3, Scored.size());
    std::partial_sort(Scored.begin(), Scored.begin() + Top, Scored.end(),
                      std::greater<>());
    if (S.enumerable(SmallSpace))
      return Pool.Points[Scored[0].second];
    std::pair<double, Point> Best{Scored[0].first,
                                  Pool.Points[Scored[0].second]};
    for (size_t K = 0; K < Top; ++K)
      climb({Scored[K].first, Pool.Points[Scored[K].second]}, Chosen, Best);
    return Best.second;
  }

  void climb(std::pair<double, Point> At, const std::set<Point> &Chosen,
             std::pair<double, Point> &Best) {
    for (unsigned Step = 0; Step < 4; ++Step) {
      bool Moved = false;
      std::vector<Point> Next;
      for (Point &Q : S.neighbours(At.second))
        if (!Obs.seen(Q) && !Chosen.count(Q))
          Next.push_back(std::move(Q));
      std::vector<double> A = acquisitions(Next);
      for (size_t I = 0; I < Next.size(); ++I)
        if (A[I] > At.first) {
          At = {A[I], Next[I]};
          Moved = true;
        }
      if (At.first > Best.first)
        Best = At;
      if (!Moved)
        return;
    }
  }

  std::vector<Point> modelPoints(unsigned N) {
    fitModels();
    // Kriging believer: pending points count as observed at their mean.
    for (const Point &P : Obs.pending()) {
      Vector X = Enc.encode(P);
      TimeModel.add(X, TimeModel.predict(X).Mean);
    }
    // One pool for the batch: its solves against the model are kept and
    // extended by each chosen point (Gp::Tracked), so the k-th proposal of
    // a batch costs a pass over the pool, not a prediction of it anew.
    ScoredPool Pool;
    Pool.Points = pool();
    std::vector<Vector> Xs;
    Xs.reserve(Pool.Points.size());
    for (const Point &P : Pool.Points)
      Xs.push_back(Enc.encode(P));
    Pool.POk = successOdds(Xs);
    Pool.Time = TimeModel.track(std::move(Xs));
    std::vector<Point> Out;
    std::set<Point> Chosen;
    while (Out.size() < N) {
      std::optional<Point> P = bestCandidate(Pool, Chosen);
      if (!P)
        break;
      Vector X = Enc.encode(*P);
      if (Out.size() + 1 < N)
        TimeModel.add(X, TimeModel.predict(X).Mean);
      Chosen.insert(*P);
      Out.push_back(std::move(*P));
      ++Choice;
    }
    return Out;
  }

  static constexpr double SmallSpace = 1000;
  static constexpr size_t MaxModelPoints = 256, BestKept = 128;
  static constexpr unsigned PoolSize = 600;
  const Space &S;
  Rng R;
  Encoder Enc;
  unsigned Initial;
  LengthScales Scales;
  Observations Obs;
  std::vector<Vector> EntryFeatures; ///< see features()
  bo::Gp TimeModel, FailModel;
  std::optional<bo::GpHyper> Hyper, FailHyper;
  struct FittedModels {
    size_t Seen; ///< the observations they were fitted to
    bo::Gp Time, Fail;
  };
  std::optional<FittedModels> Fitted;
  size_t HyperAt = 0;
  bool HasFailures = false;
  double BestLog = 0;
  /// Which acquisition function picks the next point: expected
  /// improvement, probability of improvement and the lower confidence bound
  /// take turns, a portfolio that is robust where any one of them alone
  /// explores too much or too little (GP-Hedge; Hoffman, Brochu and de
  /// Freitas 2011, here without the learned weights).
  unsigned Choice = 0;
};

} // namespace

std::unique_ptr<Strategy> makeBayesOpt(const Space &S,
                                       const StrategyOptions &O) {
  return std::make_unique<BayesOpt>(S, O);
}

} // namespace r3::search
