// The default strategy of the inner loop: Bayesian optimization and a
// genetic algorithm in one portfolio. BO models the space and wins where
// times vary smoothly with the parameters (a GEMM's tile sizes, where it
// reaches the optimum in half the evaluations of any evolutionary search);
// a GA needs no model and finds isolated optima that a smooth surrogate
// averages away (a convolution whose best block shape is 7% faster than
// anything near it, where BO alone stalls at the second best). Users pick a
// tuner by its worst case, and an inner loop runs once per source variant,
// so robustness across such spaces matters more than the best case on one.
//
// - Shared observations. Both members see every result, whoever proposed
//   it: BO's model learns from the GA's children, and the GA breeds from
//   BO's finds.
// - Screening. The GA proposes Screen times the points it is given; BO's
//   expected improvement keeps the best of them and the GA forgets the
//   rest (surrogate-assisted evolution; Jin, "Surrogate-assisted
//   evolutionary computation", Swarm and Evolutionary Computation 2011).
//   On a rugged space the screen is nearly random and costs the GA little;
//   on a smooth one it steers the GA as BO would. On the convolution cache
//   screening raised the runs that reached the optimum from 15 to 24-29 of
//   40 (bench/search-sim).
// - Allocation by recent improvement. While the best time keeps improving,
//   BO proposes most points (it is the faster climber); as evaluations go
//   by without improvement, the share moves to the screened GA, whose
//   recombination of the best points explores around them. BO's share is
//   Low + (High - Low) exp(-s / Patience) after s evaluations without a new
//   best; a member is drawn per point from the portfolio's own seeded
//   engine, so the same seed gives the same trace. The rule is a bandit
//   whose one statistic is the time since the last improvement (cf.
//   adaptive operator selection, Fialho et al., "Analyzing bandit-based
//   adaptive operator selection mechanisms", AMAI 2010): per-member credit
//   was tried first and barely moved the allocation, since improvements
//   are rare late in a run whichever member proposes.
// - One model for BO, the flexible one. BO weighs each parameter by its own
//   relevance under a log-normal prior of sd 1 (bo/BayesOpt.cpp). A tighter
//   prior (sd 0.25), a smooth model, reaches a GEMM cache's optimum sooner;
//   using it while the search improves and the flexible one once it is
//   stuck took 76 evaluations there instead of 89, but found a convolution
//   cache's isolated optimum in 135 runs of 200 instead of 169, and choosing
//   between the two models by their evidence did no better (bench/README.md).
// - The best point's region. An isolated optimum often shares most of its
//   parameters with the best points found and differs in a few that vary
//   among them: a convolution's fastest block shape is one cell of a
//   block_size_x by block_size_y table whose four neighbours are 40-110%
//   slower, under the tile sizes and flags that every good point has.
//   Neither BO (whose model extrapolates from the neighbours) nor the GA
//   (which spreads its children over the whole space) looks there on
//   purpose.
//   Once the GA has slots (the search is stuck) and 30 points have
//   succeeded, each of its slots goes, with probability one half, to the
//   best point's region instead (BestRegion.h), in two parts tried in
//   turn. First the moves: the unseen points one parameter away from the
//   best. Then the rest: the unseen points that keep every parameter on
//   which 7 of the 10 best points agree with the best one and vary the
//   others. BO's expected improvement ranks each part. This is a trust
//   region in the Hamming sense, as in trust-region BO for categorical
//   spaces (Wan et al., "Think global and act local: Bayesian optimisation
//   over high-dimensional categorical and mixed search spaces", ICML 2021),
//   whose extent is set by the agreement of the best points rather than by
//   a radius, and whose first ring is searched out before the rest; a
//   local search's first-improvement step is the same idea.
//   The moves come first because a parameter the best points agree on may
//   still be wrong: on an MI250X convolution cache the optimum is one step
//   of tile_size_x from a plateau of good points that agree on the other
//   value, and on an A6000 one the best point often ends one parameter
//   from the optimum, which BO's model, extrapolating from the slower
//   neighbours, ranks below hundreds of the region's other points. Trying
//   the moves first raised the A6000's runs that reach the optimum from 21
//   to 71 of 100 (Kernel Tuner's GA: 39), an A4000's from 46 to 65 and a
//   W7800's from 84 to 93, and left the A100 convolution's within the
//   noise of a random stream (212 of 300 against 223; the region as one
//   ranked set had raised them from 185) and the MI250X's (275 of 300
//   against 273, though its misses end further away). Without the rest,
//   the A100's fell to 57 of 100 (bench/README.md).
// - Another basin's region. A search can settle in a basin that its own
//   region cannot leave: on the MI250X convolution cache, once every move
//   of a good point (block 256x1, tiles 4x2) is tried, its neighbours fill
//   the 10 best, every parameter counts as agreed, the region is empty and
//   the GA breeds from the same points. So once the best point's moves are
//   all seen, each region slot goes, with probability one quarter, to the
//   region of the other basins instead: that of the best point among those
//   at least three parameters from the best, with the agreement measured
//   among those points only (otherBasins in BestRegion.h). Several trust
//   regions at once are TuRBO-m's (Eriksson et al., "Scalable global
//   optimization via local Bayesian optimization", NeurIPS 2019); keeping
//   the best of more than one basin is niching (Mahfoud, "Niching methods
//   for genetic algorithms", 1995). Over seeds 1-300 the MI250X's runs
//   that reach the optimum went from 275 to 282 and their best at 200
//   from 1.033 to 1.010 of it, the A100 convolution's from 212 to 216;
//   the other caches moved within the noise (bench/README.md). Waiting
//   for the moves keeps the A6000 convolution's gain: a quarter of the
//   slots from the start cost it 14 of its 71 runs in 100.
// - The best point's moves in BO's slots. Once 10 points have succeeded,
//   each of BO's slots goes, with probability one half, to the best point's
//   unseen one-parameter moves, ranked by BO's acquisition, and stays BO's
//   own when they are all seen. BO's own choice maximises its acquisition
//   over the whole space, where a rugged surface's model is least sure; this
//   maximises it over the best point's neighbours as well, which is how SMAC
//   optimises its acquisition (a local search from the best configurations
//   beside random ones; Hutter et al., "Sequential model-based optimization
//   for general algorithm configuration", LION 2011), and makes the climb
//   while BO leads a first-improvement local search. On the convolution
//   caches it reached the optimum sooner (mean evaluations to 1%, a run that
//   never got there counted as 201): over seeds 1-300 the A100's in 136.1
//   against 141.9 (223 runs of 300 against 216), the A6000's in 145.0
//   against 154.9 (209 against 199) and the A4000's in 132.1 against 138.0
//   (192 against 197, within the noise of a random stream); over seeds 1-100
//   the MI250X's in 90.6 against 107.2 and the W7800's in 99.2 against
//   106.8, in about as many runs (96 against 94, 91 against 92). On the GEMM
//   cache 99 runs of 100 reached 1% against 97, and within 5% in 66.8
//   evaluations against 71.3 (bench/README.md).
// - The look away once settled. A search can settle in a basin whose own
//   region, moves and children never leave it: on a W6600 convolution
//   cache the fastest points use shared memory at 2.07 ms, and the optimum
//   (1.73 ms) and its three near-equals are a narrow basin without it,
//   four to five parameters away, so most runs that missed it made no
//   improvement after evaluation 100. Once StallAfter evaluations go by
//   without a new best (and 10 points have succeeded), each slot goes,
//   with probability AwayShare, away from the basin: to the points at
//   least AwayDistance parameters from the best, a random pool of them
//   ranked by BO's acquisition (farPoints in BestRegion.h). A new best
//   anywhere ends the look away, and the climb resumes around it. This is
//   the restart of Kernel Tuner's basin hopping and iterated local
//   searches, kept inside one model: nothing observed is forgotten, and
//   the model says which of the far points are worth a look. The pool is
//   AwayPool points, fresh at every proposal: on a GEMM cache at 2000
//   observations 1024 cost a proposal about 10 ms more, 256 about 3 ms
//   more in the one quiet measurement (the machine was noisy; see
//   bench/README.md). Handing half of the slots to plain BO (one length
//   scale) as a third member did about as well on the eight caches (139
//   runs of 160 within 1% against 137) for one more model to fit.
//   Chosen on eight caches (the A100, A6000, A4000 and W7800
//   convolutions, two GEMMs, a 3060 convolution of another space and the
//   MI250X dedispersion; seeds 1-20), checked on 23 others
//   (bench/README.md).
// - Resume rebuilds everything: the members from the observations, and the
//   count of evaluations since the last improvement from their order.
//
// Figures (bench/search-vs-kernel-tuner) are in bench/README.md.
#include "search/BestRegion.h"
#include "search/Strategy.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace r3::search {

namespace {

enum Member : size_t { Bo = 0, Ga = 1 };

class Portfolio final : public Strategy {
public:
  Portfolio(const Space &S, const StrategyOptions &O)
      : S(S), RegionR(O.Seed * 131 + 17), MoveR(O.Seed * 17 + 5),
        AwayR(O.Seed * 73 + 11), R(O.Seed * 31 + 7) {
    StrategyOptions BoOptions = O;
    BoOptions.Scales = LengthScales::PerParameter;
    Members[Bo] = makeBayesOpt(S, BoOptions);
    Members[Ga] = makeGenetic(S, O);
  }

  std::string_view name() const override { return "portfolio"; }

  std::vector<Point> propose(unsigned N) override {
    std::array<unsigned, 2> Count{0, 0};
    std::bernoulli_distribution UseBo(boShare());
    for (unsigned I = 0; I < N; ++I)
      ++Count[UseBo(R) ? Bo : Ga];
    std::vector<Point> Out;
    if (settled()) {
      // Slots leave BO first (whose share is nearly nothing by now), then
      // the GA.
      unsigned ToAway = 0;
      std::bernoulli_distribution UseAway(AwayShare);
      for (unsigned I = 0; I < N; ++I)
        ToAway += UseAway(AwayR);
      unsigned FromBo = std::min(ToAway, Count[Bo]);
      Count[Bo] -= FromBo;
      Count[Ga] -= ToAway - FromBo;
      // What the look away could not fill goes back to the GA.
      Count[Ga] += ToAway - claim(away(ToAway), Out);
    }
    unsigned ToMoves = 0;
    if (Count[Bo] && Good.size() >= RegionTop) {
      std::bernoulli_distribution UseMoves(MoveShare);
      for (unsigned I = 0; I < Count[Bo]; ++I)
        ToMoves += UseMoves(MoveR);
    }
    if (ToMoves)
      Count[Bo] -= claim(moves(ToMoves), Out);
    take(Bo, Members[Bo]->propose(Count[Bo]), Out);
    unsigned ToRegion = 0;
    std::bernoulli_distribution UseRegion(RegionShare);
    for (unsigned I = 0; I < Count[Ga]; ++I)
      ToRegion += UseRegion(RegionR);
    if (ToRegion)
      Count[Ga] -= claim(region(ToRegion), Out);
    take(Ga, screened(Count[Ga]), Out);
    // A member that ran dry (its space exhausted) leaves its slots to the
    // other.
    if (Out.size() < N)
      take(Bo, Members[Bo]->propose(N - Out.size()), Out);
    if (Out.size() < N)
      take(Ga, Members[Ga]->propose(N - Out.size()), Out);
    return Out;
  }

  void observe(const Point &P, std::optional<double> Value) override {
    size_t Before = Seen.entries().size();
    Seen.observe(P, Value);
    // A point measured again keeps only its latest outcome, as in
    // Observations.
    if (Seen.entries().size() == Before)
      std::erase_if(Good, [&](const auto &E) { return E.second == P; });
    ++SinceBest;
    if (Value && *Value > 0) {
      Good.push_back({*Value, P});
      if (!Best || *Value < *Best) {
        Best = Value;
        SinceBest = 0;
      }
    }
    for (auto &M : Members)
      M->observe(P, Value);
  }
  void markPending(const Point &P) override {
    Seen.markPending(P);
    for (auto &M : Members)
      M->markPending(P);
  }
  void forget(const Point &P) override {
    Seen.forget(P);
    for (auto &M : Members)
      M->forget(P);
  }

private:
  /// The probability that BO proposes the next point (see the file
  /// comment).
  double boShare() const {
    return Low +
           (High - Low) * std::exp(-static_cast<double>(SinceBest) / Patience);
  }

  /// Whether the search has settled: StallAfter evaluations without a new
  /// best, and enough successes for a model and a basin (see the file
  /// comment).
  bool settled() const {
    return SinceBest >= StallAfter && Good.size() >= RegionTop;
  }

  /// Moves Member's proposals to Out, telling the other member they are
  /// pending.
  void take(Member From, std::vector<Point> Ps, std::vector<Point> &Out) {
    Member Other = From == Bo ? Ga : Bo;
    for (Point &P : Ps) {
      Members[Other]->markPending(P);
      Seen.markPending(P);
      Out.push_back(std::move(P));
    }
  }

  /// Up to N unseen points at least AwayDistance parameters from the best,
  /// the best of a random pool of them by BO's acquisition: the look away
  /// from a settled search's basin (see the file comment).
  std::vector<Point> away(unsigned N) {
    if (N == 0)
      return {};
    std::vector<Point> Pool =
        farPoints(S, Good, Seen, AwayDistance, AwayPool, AwayR);
    std::vector<Point> Out;
    for (size_t I : byAcquisition(Pool)) {
      if (Out.size() == N)
        break;
      Out.push_back(std::move(Pool[I]));
    }
    return Out;
  }

  /// The positions of Ps, best first by BO's acquisition; in their own
  /// order while BO has no model yet (its initial design).
  std::vector<size_t> byAcquisition(const std::vector<Point> &Ps) {
    std::vector<double> Score = Members[Bo]->score(Ps);
    std::vector<size_t> Order(Ps.size());
    for (size_t I = 0; I < Order.size(); ++I)
      Order[I] = I;
    if (Score.size() == Ps.size())
      std::stable_sort(Order.begin(), Order.end(),
                       [&](size_t A, size_t B) { return Score[A] > Score[B]; });
    return Order;
  }

  /// Moves the portfolio's own proposals Ps to Out, telling both members
  /// they are pending; returns how many.
  unsigned claim(std::vector<Point> Ps, std::vector<Point> &Out) {
    for (Point &P : Ps) {
      for (auto &M : Members)
        M->markPending(P);
      Seen.markPending(P);
      Out.push_back(std::move(P));
    }
    return static_cast<unsigned>(Ps.size());
  }

  /// Up to N of the best point's unseen one-parameter moves, ranked by BO's
  /// acquisition: the local search in BO's slots (see the file comment).
  /// The region is built whole, as region() builds it, so that its random
  /// engine advances as it did when the figures were measured.
  std::vector<Point> moves(unsigned N) {
    Region Near = bestRegion(S, Good, Seen, RegionTop, RegionAgree,
                             RegionLimit, RegionR);
    Near.Rest.clear();
    std::vector<Point> Out;
    pick(Near, N, Out);
    return Out;
  }

  /// N of the GA's proposals, screened by BO's expected improvement.
  std::vector<Point> screened(unsigned N) {
    if (N == 0)
      return {};
    std::vector<Point> Ps = Members[Ga]->propose(N * Screen);
    std::vector<size_t> Order = byAcquisition(Ps);
    std::vector<Point> Out;
    for (size_t I = 0; I < Order.size(); ++I) {
      if (I < N)
        Out.push_back(Ps[Order[I]]);
      else
        Members[Ga]->forget(Ps[Order[I]]);
    }
    return Out;
  }

  /// Up to N points of the best point's region, the moves first, each part
  /// ranked by BO's acquisition; once the best point's moves are all seen,
  /// each slot goes with probability OtherShare to the region of the best
  /// point of the other basins instead (see the file comment). None before
  /// RegionAfter points have succeeded.
  std::vector<Point> region(unsigned N) {
    if (Good.size() < RegionAfter)
      return {};
    Region Near = bestRegion(S, Good, Seen, RegionTop, RegionAgree,
                             RegionLimit, RegionR);
    unsigned ToOther = 0;
    std::vector<std::pair<double, Point>> Others;
    if (Near.Moves.empty()) {
      std::bernoulli_distribution UseOther(OtherShare);
      for (unsigned I = 0; I < N; ++I)
        ToOther += UseOther(RegionR);
      if (ToOther)
        Others = otherBasins(Good, OtherDistance);
      // Too few points elsewhere for a region of their own: the slots stay
      // with the best point's.
      if (Others.size() < RegionTop)
        ToOther = 0;
    }
    std::vector<Point> Out;
    pick(Near, N - ToOther, Out);
    if (ToOther) {
      Region Far = bestRegion(S, Others, Seen, RegionTop, RegionAgree,
                              RegionLimit, RegionR);
      pick(Far, ToOther, Out);
    }
    return Out;
  }

  /// Moves up to K points of Near to Out, the moves first, each part ranked
  /// by BO's acquisition, leaving out any that Out holds already.
  void pick(Region &Near, unsigned K, std::vector<Point> &Out) {
    const size_t Before = Out.size();
    for (std::vector<Point> *Part : {&Near.Moves, &Near.Rest}) {
      if (Out.size() - Before == K)
        return;
      for (size_t I : byAcquisition(*Part)) {
        if (std::find(Out.begin(), Out.end(), (*Part)[I]) != Out.end())
          continue;
        Out.push_back(std::move((*Part)[I]));
        if (Out.size() - Before == K)
          return;
      }
    }
  }

  static constexpr unsigned Screen = 4;
  static constexpr double High = 0.9, Low = 0.0, Patience = 10;
  static constexpr double RegionShare = 0.5, RegionAgree = 0.7;
  static constexpr unsigned RegionTop = 10, RegionAfter = 30;
  static constexpr double OtherShare = 0.25, MoveShare = 0.5;
  static constexpr unsigned OtherDistance = 3;
  static constexpr size_t RegionLimit = 4096;
  static constexpr unsigned StallAfter = 30, AwayDistance = 3;
  static constexpr double AwayShare = 0.5;
  static constexpr size_t AwayPool = 256;
  const Space &S;
  /// Every point observed or pending, and the successful ones with their
  /// values in the order observed (the region's inputs).
  Observations Seen;
  std::vector<std::pair<double, Point>> Good;
  Rng RegionR, MoveR, AwayR;
  std::array<std::unique_ptr<Strategy>, 2> Members;
  std::optional<double> Best;
  unsigned SinceBest = 0;
  Rng R;
};

} // namespace

std::unique_ptr<Strategy> makePortfolio(const Space &S,
                                        const StrategyOptions &O) {
  return std::make_unique<Portfolio>(S, O);
}

} // namespace r3::search
