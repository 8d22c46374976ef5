// Bayesian optimization: the Gaussian process (interpolation, uncertainty,
// hyperparameters, incremental updates), expected improvement, and the
// strategy against random search at equal budgets on synthetic problems with
// known optima, averaged over seeds and asserted with a margin.
#include "Catch.h"

#include "SearchTestSpaces.h"
#include "search/bo/Gp.h"

#include <cmath>
#include <numeric>

using namespace r3::search;
using namespace r3::search::testing;

namespace {

double f1(double X) { return std::sin(6 * X) + X; }

/// Mean over Seeds of the evaluations Name needs to reach Target (a run that
/// does not reach it counts Budget + 1), and the mean of its failures.
std::pair<double, double> meanEvaluations(const char *Name, const Space &S,
                                          const Objective &F, unsigned Budget,
                                          double Target, unsigned Seeds) {
  double Sum = 0, Failures = 0;
  for (unsigned Seed = 1; Seed <= Seeds; ++Seed) {
    auto St = makeStrategy(Name, S, StrategyOptions{Seed, 0});
    REQUIRE(St);
    Run R = runStrategy(**St, S, F, Budget, 1, Target);
    Sum += R.FoundAt ? *R.FoundAt : Budget + 1;
    Failures += R.Failures;
  }
  return {Sum / Seeds, Failures / Seeds};
}

} // namespace

TEST_CASE("the GP interpolates and is uncertain away from data", "[bo]") {
  std::vector<bo::Vector> X;
  bo::Vector Y;
  for (int I = 0; I <= 10; ++I) {
    double V = I / 10.0;
    X.push_back({V});
    Y.push_back(f1(V));
  }
  bo::Gp G;
  G.fit(X, Y);
  for (size_t I = 0; I < X.size(); ++I) {
    bo::Prediction P = G.predict(X[I]);
    CHECK(std::abs(P.Mean - Y[I]) < 0.05);
    CHECK(P.Variance < 0.01);
  }
  // Between the data the mean follows the function; far away it reverts to
  // the mean of the data with a larger variance.
  CHECK(std::abs(G.predict({0.55}).Mean - f1(0.55)) < 0.1);
  bo::Prediction Far = G.predict({5.0});
  double MeanY = std::accumulate(Y.begin(), Y.end(), 0.0) / Y.size();
  CHECK(std::abs(Far.Mean - MeanY) < 0.05);
  CHECK(Far.Variance > 10 * G.predict({0.55}).Variance);
}

TEST_CASE("the GP's noise grows with noisy data", "[bo]") {
  std::vector<bo::Vector> X;
  bo::Vector Clean, Noisy;
  Rng R(3);
  std::normal_distribution<double> Noise(0, 0.3);
  for (int I = 0; I < 30; ++I) {
    double V = I / 29.0;
    X.push_back({V});
    Clean.push_back(f1(V));
    Noisy.push_back(f1(V) + Noise(R));
  }
  bo::Gp A, B;
  A.fit(X, Clean);
  B.fit(X, Noisy);
  CHECK(B.hyper().Noise > A.hyper().Noise);
}

TEST_CASE("adding a point equals refitting with the same hyperparameters",
          "[bo]") {
  std::vector<bo::Vector> X = {{0.1, 0.3}, {0.5, 0.9}, {0.7, 0.2}, {0.9, 0.6}};
  bo::Vector Y = {1.0, 2.0, 0.5, 1.5};
  bo::Gp Full, Grown;
  Full.fit(X, Y);
  bo::GpHyper H = Full.hyper();
  Grown.fit({X.begin(), X.end() - 1}, {Y.begin(), Y.end() - 1}, &H);
  Grown.add(X.back(), Y.back());
  // The standardization of the grown model is that of its first fit, so
  // compare at the data, where both interpolate.
  for (size_t I = 0; I < X.size(); ++I)
    CHECK(std::abs(Grown.predict(X[I]).Mean - Full.predict(X[I]).Mean) < 0.1);
  CHECK(Grown.size() == 4);
}

TEST_CASE("predictions in blocks equal single predictions", "[bo]") {
  // 37 queries: two full blocks of 16 and a partial one, on 60 points.
  std::vector<bo::Vector> X, Q;
  bo::Vector Y;
  for (int I = 0; I < 60; ++I) {
    X.push_back({I / 60.0, (I * 7 % 60) / 60.0});
    Y.push_back(f1(I / 60.0) + X.back()[1]);
  }
  for (int I = 0; I < 37; ++I)
    Q.push_back({(I * 13 % 37) / 30.0, I / 40.0});
  bo::Gp G;
  CHECK(G.predictMany(Q).size() == 37); // the prior, before any fit
  CHECK(G.means(Q) == std::vector<double>(37, 0.0));
  G.fit(X, Y);
  std::vector<bo::Prediction> Many = G.predictMany(Q);
  REQUIRE(Many.size() == Q.size());
  std::vector<double> Means = G.means(Q);
  REQUIRE(Means.size() == Q.size());
  for (size_t I = 0; I < Q.size(); ++I) {
    bo::Prediction One = G.predict(Q[I]);
    CHECK(Means[I] == One.Mean); // the same sum as predict's
    CHECK(std::abs(Many[I].Mean - One.Mean) < 1e-9);
    CHECK(std::abs(Many[I].Variance - One.Variance) <
          1e-9 * std::max(1.0, One.Variance));
  }
}

TEST_CASE("predictions in blocks equal single predictions under relevance "
          "weights",
          "[bo]") {
  std::vector<bo::Vector> X, Q;
  bo::Vector Y;
  for (int I = 0; I < 50; ++I) {
    X.push_back({I / 50.0, (I * 7 % 50) / 50.0, (I * 3 % 11) / 11.0});
    Y.push_back(f1(I / 50.0) + 3 * X.back()[1]);
  }
  for (int I = 0; I < 21; ++I)
    Q.push_back({(I * 13 % 21) / 20.0, I / 25.0, (I % 4) / 3.0});
  bo::Gp G;
  G.fit(X, Y);
  G.fitRelevance({{0}, {1}, {2}});
  REQUIRE(!G.hyper().Weights.empty());
  std::vector<bo::Prediction> Many = G.predictMany(Q);
  for (size_t I = 0; I < Q.size(); ++I) {
    bo::Prediction One = G.predict(Q[I]);
    CHECK(std::abs(Many[I].Mean - One.Mean) < 1e-9);
    CHECK(std::abs(Many[I].Variance - One.Variance) <
          1e-9 * std::max(1.0, One.Variance));
  }
}

namespace {

/// Whether A and B predict the same at every Q, to Tol.
bool samePredictions(const bo::Gp &A, const bo::Gp &B,
                     const std::vector<bo::Vector> &Q, double Tol) {
  for (const bo::Vector &P : Q) {
    bo::Prediction Pa = A.predict(P), Pb = B.predict(P);
    if (std::abs(Pa.Mean - Pb.Mean) > Tol ||
        std::abs(Pa.Variance - Pb.Variance) > Tol * std::max(1.0, Pb.Variance))
      return false;
  }
  return true;
}

} // namespace

TEST_CASE("a refit under the same hyperparameters reuses the last one's work",
          "[bo]") {
  // A long inner loop's model: a window of observations that loses old
  // rows and gains new ones, refitted after each with the hyperparameters
  // kept.
  Rng R(5);
  std::uniform_real_distribution<double> U(0, 1);
  auto Row = [&] { return bo::Vector{U(R), U(R), U(R)}; };
  auto Value = [](const bo::Vector &V) { return f1(V[0]) + V[1] * V[2]; };
  std::vector<bo::Vector> X, Q;
  bo::Vector Y;
  for (int I = 0; I < 60; ++I) {
    X.push_back(Row());
    Y.push_back(Value(X.back()));
  }
  for (int I = 0; I < 25; ++I)
    Q.push_back(Row());
  bo::Gp G;
  G.fit(X, Y);
  G.fitRelevance({{0}, {1, 2}});
  const bo::GpHyper H = G.hyper();

  SECTION("one more row: no new factorization, one new kernel row") {
    bo::Gp::Work Before = G.work();
    X.push_back(Row());
    Y.push_back(Value(X.back()));
    G.fit(X, Y, &H);
    CHECK(G.work().Factorizations == Before.Factorizations);
    CHECK(G.work().KernelEntries - Before.KernelEntries == X.size());
    bo::Gp Fresh;
    Fresh.fit(X, Y, &H);
    // Rows only appended: the factor is the one made from scratch, to the
    // bit.
    for (const bo::Vector &P : Q) {
      CHECK(G.predict(P).Mean == Fresh.predict(P).Mean);
      CHECK(G.predict(P).Variance == Fresh.predict(P).Variance);
    }
  }

  SECTION("rows dropped from the middle and rows added") {
    for (int Step = 0; Step < 12; ++Step) {
      bo::Gp::Work Before = G.work();
      size_t Drop = (Step * 17) % X.size();
      X.erase(X.begin() + static_cast<long>(Drop));
      Y.erase(Y.begin() + static_cast<long>(Drop));
      X.push_back(Row());
      Y.push_back(Value(X.back()));
      G.fit(X, Y, &H);
      INFO("step " << Step << ", dropped row " << Drop);
      CHECK(G.work().Factorizations == Before.Factorizations);
      CHECK(G.work().KernelEntries - Before.KernelEntries == X.size());
      bo::Gp Fresh;
      Fresh.fit(X, Y, &H);
      CHECK(samePredictions(G, Fresh, Q, 1e-9));
      CHECK(std::abs(G.logLikelihood() - Fresh.logLikelihood()) < 1e-8);
    }
  }

  SECTION("a reordered or much changed model is factored anew") {
    bo::Gp::Work Before = G.work();
    std::swap(X[3], X[40]);
    std::swap(Y[3], Y[40]);
    G.fit(X, Y, &H);
    CHECK(G.work().Factorizations == Before.Factorizations + 1);
    // The kernel matrix is the last one's, rows found wherever they sit.
    CHECK(G.work().KernelEntries == Before.KernelEntries);
    bo::Gp Fresh;
    Fresh.fit(X, Y, &H);
    CHECK(samePredictions(G, Fresh, Q, 1e-12));

    Before = G.work();
    X.erase(X.begin(), X.begin() + 20);
    Y.erase(Y.begin(), Y.begin() + 20);
    G.fit(X, Y, &H);
    CHECK(G.work().Factorizations == Before.Factorizations + 1);
    CHECK(G.work().KernelEntries == Before.KernelEntries);
    Fresh.fit(X, Y, &H);
    CHECK(samePredictions(G, Fresh, Q, 1e-12));
  }

  SECTION("other hyperparameters: every kernel entry anew") {
    bo::GpHyper Other = H;
    Other.LengthScale *= 2;
    bo::Gp::Work Before = G.work();
    G.fit(X, Y, &Other);
    CHECK(G.work().Factorizations == Before.Factorizations + 1);
    CHECK(G.work().KernelEntries - Before.KernelEntries ==
          X.size() * (X.size() + 1) / 2);
    // Only the noise differs: the kernel matrix is kept.
    Other = H;
    Other.Noise *= 3;
    bo::Gp Again;
    Again.fit(X, Y, &H);
    Before = Again.work();
    Again.fit(X, Y, &Other);
    CHECK(Again.work().Factorizations == Before.Factorizations + 1);
    CHECK(Again.work().KernelEntries == Before.KernelEntries);
  }
}

TEST_CASE("tracked posteriors follow added points and new fits", "[bo]") {
  std::vector<bo::Vector> X, Q;
  bo::Vector Y;
  for (int I = 0; I < 40; ++I) {
    X.push_back({I / 40.0, (I * 11 % 40) / 40.0});
    Y.push_back(f1(I / 40.0) - X.back()[1]);
  }
  for (int I = 0; I < 21; ++I)
    Q.push_back({(I * 5 % 21) / 20.0, I / 25.0});
  bo::Gp G;
  G.fit(X, Y);
  bo::Gp::Tracked T = G.track(Q);
  REQUIRE(T.size() == Q.size());
  auto Same = [&](const char *When) {
    INFO(When);
    for (size_t I = 0; I < Q.size(); ++I) {
      bo::Prediction One = G.predict(Q[I]), Kept = G.at(T, I);
      CHECK(std::abs(Kept.Mean - One.Mean) < 1e-8);
      CHECK(std::abs(Kept.Variance - One.Variance) <
            1e-8 * std::max(1.0, One.Variance));
    }
  };
  Same("at the fit");
  // Observations that are not believed means move the means too; a query
  // point itself among them collapses its variance.
  G.add({0.33, 0.71}, 2.5);
  G.add(Q[4], -1.0);
  G.add({0.9, 0.05}, 0.2);
  G.refresh(T);
  Same("after three added points");
  CHECK(G.at(T, 4).Variance < 0.05 * G.predict({5.0, 5.0}).Variance);
  G.refresh(T); // nothing new: unchanged
  Same("after a refresh with nothing added");
  // A new fit of as many points changes the factor whole: the tracked set
  // starts again.
  for (int I = 0; I < 3; ++I) {
    X.push_back({0.2 * I, 0.5});
    Y.push_back(1.0 + I);
  }
  for (double &V : Y)
    V *= 2;
  G.fit(X, Y);
  REQUIRE(G.size() == 43);
  G.refresh(T);
  Same("after a new fit");
}

TEST_CASE("expected improvement", "[bo]") {
  // No uncertainty: the plain gain; more uncertainty: more expected gain.
  CHECK(bo::expectedImprovement({1.0, 0.0}, 2.0) == 1.0);
  CHECK(bo::expectedImprovement({3.0, 0.0}, 2.0) == 0.0);
  double Low = bo::expectedImprovement({2.0, 0.01}, 2.0);
  double High = bo::expectedImprovement({2.0, 1.0}, 2.0);
  CHECK(Low > 0);
  CHECK(High > 5 * Low);
  // At equal uncertainty, a lower mean is better.
  CHECK(bo::expectedImprovement({1.5, 0.2}, 2.0) >
        bo::expectedImprovement({1.9, 0.2}, 2.0));
}

TEST_CASE("BO beats random search on a smooth problem", "[bo]") {
  // 4 ordinals of 12 values (20736 points), a bowl with its optimum (1.0,
  // one point) at (7, 3, 9, 2), plus a categorical that adds 0.5 unless 1.
  Space S({ordinalParam("a", 12), ordinalParam("b", 12), ordinalParam("c", 12),
           ordinalParam("d", 12), categoricalParam("k", 3)});
  Objective Bowl = bowl({7, 3, 9, 2});
  Objective F = [Bowl](const Point &P) -> std::optional<double> {
    return *Bowl(P) + (P.Values[4][0] == 1 ? 0 : 0.5);
  };
  auto [Bo, BoFail] = meanEvaluations("bo", S, F, 150, 1.05, 8);
  auto [Random, RandomFail] = meanEvaluations("random", S, F, 150, 1.05, 8);
  auto [Tpe, TpeFail] = meanEvaluations("tpe", S, F, 150, 1.05, 8);
  UNSCOPED_INFO("evaluations to within 5%: bo " << Bo << ", tpe " << Tpe
                                                << ", random " << Random);
  CHECK(Bo * 3 < Random);
  CHECK(Tpe < Random);
}

TEST_CASE("BO learns to avoid a failing region", "[bo]") {
  // Half the space fails (a > 5 does not compile, say); the optimum sits at
  // the border, so a strategy that does not learn the failures keeps
  // hitting them.
  Space S({ordinalParam("a", 12), ordinalParam("b", 12), ordinalParam("c", 8)});
  Objective Bowl = bowl({5, 8, 3});
  Objective F = [Bowl](const Point &P) -> std::optional<double> {
    if (P.Values[0][0] > 5)
      return std::nullopt;
    return Bowl(P);
  };
  auto [Bo, BoFail] = meanEvaluations("bo", S, F, 80, 1.0, 8);
  auto [Random, RandomFail] = meanEvaluations("random", S, F, 80, 1.0, 8);
  UNSCOPED_INFO("failures in 80 evaluations: bo " << BoFail << ", random "
                                                  << RandomFail);
  UNSCOPED_INFO("evaluations to the optimum: bo " << Bo << ", random "
                                                  << Random);
  CHECK(BoFail * 2 < RandomFail);
  CHECK(Bo < Random);
}

TEST_CASE("BO proposes full batches of distinct points", "[bo]") {
  Space S({ordinalParam("a", 6), ordinalParam("b", 6)});
  auto St = makeBayesOpt(S, StrategyOptions{2, 4});
  Objective F = bowl({1, 4});
  std::set<Point> All;
  for (int Round = 0; Round < 5; ++Round) {
    std::vector<Point> Ps = St->propose(5);
    REQUIRE(Ps.size() == 5);
    for (const Point &P : Ps) {
      CHECK(All.insert(P).second);
      St->observe(P, F(P));
    }
  }
  // 25 of 36 points seen: the model must have found the optimum's
  // neighbourhood, and the 11 left come out before it runs dry.
  CHECK(All.count(Point{{{1}, {4}}}));
  CHECK(St->propose(20).size() == 11);
}

TEST_CASE("BO beyond its model's size keeps the best points in view", "[bo]") {
  // 700 observations, more than the models are fitted to: first the 40
  // neighbours of the optimum (at (2, 2, 2, 2), not itself observed), then
  // 660 points far from it. The models keep the fastest points beside the
  // most recent, so the next proposals still close in on the optimum.
  Space S({ordinalParam("a", 12), ordinalParam("b", 12), ordinalParam("c", 12),
           ordinalParam("d", 12)});
  Objective F = bowl({2, 2, 2, 2});
  auto St = makeBayesOpt(S, StrategyOptions{3, 4});
  auto Distance = [](const Point &P) {
    unsigned D = 0;
    for (const auto &V : P.Values)
      D += V[0] > 2 ? V[0] - 2 : 2 - V[0];
    return D;
  };
  unsigned Near = 0;
  for (const Point &P : S.enumerate())
    if (unsigned D = Distance(P); D >= 1 && D <= 2 && P.Values[0][0] < 7) {
      St->observe(P, F(P));
      ++Near;
    }
  REQUIRE(Near == 40);
  Rng R(5);
  std::set<Point> Far;
  while (Far.size() < 660) {
    Point P = S.random(R);
    if (P.Values[0][0] >= 7 && Far.insert(P).second)
      St->observe(P, F(P));
  }
  std::vector<Point> Ps = St->propose(3);
  REQUIRE(Ps.size() == 3);
  unsigned Close = 0;
  for (const Point &P : Ps)
    Close += Distance(P) <= 3;
  UNSCOPED_INFO("proposals within distance 3 of the optimum: " << Close);
  CHECK(Close >= 2);
  CHECK(std::count(Ps.begin(), Ps.end(), Point{{{2}, {2}, {2}, {2}}}) == 1);
}

TEST_CASE("relevance weights find the feature the targets depend on", "[bo]") {
  // y varies quickly with x0 and not at all with x1: after the relevance
  // search x0 weighs more than x1, and the fit explains the data better.
  std::vector<bo::Vector> X;
  bo::Vector Y;
  for (int I = 0; I < 6; ++I)
    for (int J = 0; J < 6; ++J) {
      double A = I / 5.0, B = (J * 7 % 6) / 5.0;
      X.push_back({A, B});
      Y.push_back(std::sin(9 * A));
    }
  bo::Gp Shared;
  Shared.fit(X, Y);
  bo::Gp Ard;
  Ard.fit(X, Y);
  Ard.fitRelevance({{0}, {1}});
  const bo::Vector &W = Ard.hyper().Weights;
  REQUIRE(W.size() == 2);
  CHECK(W[0] > W[1]);
  CHECK(Ard.logLikelihood() > Shared.logLikelihood());
  CHECK(Shared.hyper().Weights.empty());
}

namespace {

/// A rugged block shape (a, b) in front of a smooth tail (c, d): the best
/// (a, b) is one point among values that jump around without a pattern, as
/// block sizes do on a convolution kernel.
std::optional<double> spike(const Point &P) {
  uint32_t A = P.Values[0][0], B = P.Values[1][0];
  double C = P.Values[2][0], D = P.Values[3][0];
  double Tail = 0.2 * ((C - 2) * (C - 2) + (D - 1) * (D - 1));
  double Shape = A == 3 && B == 2 ? 1.0 : 1.1 + ((A * 7 + B * 13) % 11) / 10.0;
  return Shape + Tail;
}

} // namespace

TEST_CASE("the portfolio's trace is the seed's", "[bo]") {
  Space S({ordinalParam("a", 16), ordinalParam("b", 5), ordinalParam("c", 6),
           ordinalParam("d", 6)});
  auto Trace = [&](uint64_t Seed) {
    auto St = makeStrategy("portfolio", S, StrategyOptions{Seed, 0});
    REQUIRE(St);
    std::vector<Point> Out;
    for (int Round = 0; Round < 15; ++Round)
      for (Point &P : (*St)->propose(3)) {
        (*St)->observe(P, spike(P));
        Out.push_back(std::move(P));
      }
    return Out;
  };
  std::vector<Point> First = Trace(5);
  CHECK(First.size() == 45);
  CHECK(Trace(5) == First);
  CHECK(Trace(6) != First);
}
