// The best point's region (search/BestRegion.h), where the portfolio looks
// once its search is stuck: the best point's one-parameter moves, then the
// points that keep the parameters the best points agree on and vary the
// others; seen, pending and disallowed points are left out. Once the best
// point's moves are seen, the portfolio also looks at the region of the
// other basins' best point; while its search improves, half of BO's slots
// go to the best point's moves; once it has settled, half of the slots
// look away from its basin.
#include "Catch.h"

#include "SearchTestSpaces.h"
#include "search/BestRegion.h"

#include <set>

using namespace r3::search;
using namespace r3::search::testing;

namespace {

Point pt(uint32_t X, uint32_t Y, uint32_t Z) { return Point{{{X}, {Y}, {Z}}}; }

/// How many parameters P and Q differ in.
unsigned moved(const Point &P, const Point &Q) {
  unsigned N = 0;
  for (size_t J = 0; J < P.Values.size(); ++J)
    N += P.Values[J] != Q.Values[J];
  return N;
}

/// The moves then the rest, as one list.
std::vector<Point> all(const Region &Near) {
  std::vector<Point> Out = Near.Moves;
  Out.insert(Out.end(), Near.Rest.begin(), Near.Rest.end());
  return Out;
}

/// Four parameters of eight values each: the space of the portfolio tests.
Space fourByEight() {
  return Space({ordinalParam("a", 8), ordinalParam("b", 8),
                ordinalParam("c", 8), categoricalParam("d", 8)});
}

/// The one-parameter moves of B in fourByEight() that are not in Seen.
std::set<Point> unseenMoves(const Point &B, const std::set<Point> &Seen) {
  std::set<Point> Out;
  for (size_t J = 0; J < 4; ++J)
    for (uint32_t X = 0; X < 8; ++X) {
      Point P = B;
      P.Values[J] = {X};
      if (P != B && !Seen.count(P))
        Out.insert(P);
    }
  return Out;
}

/// Asks St for one point at a time, observing each at a time slower than
/// everything seen, until every point of Targets was proposed or Allowed
/// proposals were made; returns how many were made and leaves in Targets
/// those never proposed.
size_t proposeUntil(Strategy &St, std::set<Point> &Targets, size_t Allowed) {
  size_t Proposed = 0;
  while (!Targets.empty() && Proposed < Allowed) {
    std::vector<Point> Ps = St.propose(1);
    REQUIRE(Ps.size() == 1);
    ++Proposed;
    Targets.erase(Ps[0]);
    St.observe(Ps[0], 4.0);
  }
  return Proposed;
}

Space xyz() {
  return Space({ordinalParam("x", 10), categoricalParam("y", 3),
                ordinalParam("z", 5)});
}

/// Ten successful points, the best (1, 2, 3) the fastest: every one has
/// y = 2, eight of them z = 3 (x from 1 to 8), and x varies.
struct Fixture {
  std::vector<std::pair<double, Point>> Good;
  Observations Seen;
  Fixture() {
    std::vector<Point> Ps;
    for (uint32_t X = 1; X <= 8; ++X)
      Ps.push_back(pt(X, 2, 3));
    Ps.push_back(pt(9, 2, 0));
    Ps.push_back(pt(0, 2, 4));
    for (size_t I = 0; I < Ps.size(); ++I) {
      double V = 1.0 + static_cast<double>(I);
      Good.push_back({V, Ps[I]});
      Seen.observe(Ps[I], V);
    }
  }
  std::set<Point> region(const Space &S, double Agree = 0.7,
                         size_t Limit = 1000, uint64_t Seed = 1) {
    Rng R(Seed);
    Region Near = bestRegion(S, Good, Seen, 10, Agree, Limit, R);
    // The moves are one parameter from the best (1, 2, 3), the rest more.
    for (const Point &P : Near.Moves)
      CHECK(moved(P, pt(1, 2, 3)) == 1);
    for (const Point &P : Near.Rest)
      CHECK(moved(P, pt(1, 2, 3)) > 1);
    std::vector<Point> Ps = all(Near);
    std::set<Point> Out(Ps.begin(), Ps.end());
    CHECK(Out.size() == Ps.size());
    return Out;
  }
};

std::set<Point> unseen(const Fixture &F, std::set<Point> Ps) {
  std::set<Point> Out;
  for (const Point &P : Ps)
    if (!F.Seen.seen(P))
      Out.insert(P);
  return Out;
}

} // namespace

TEST_CASE("the region keeps what the best points agree on",
          "[strategy][region]") {
  Space S = xyz();
  Fixture F; // y: 10 of 10 agree, z: 8 of 10 (kept at 0.7), x varies
  std::set<Point> Want;
  for (uint32_t X = 0; X < 10; ++X)
    Want.insert(pt(X, 2, 3)); // x free
  for (uint32_t Y : {0u, 1u})
    Want.insert(pt(1, Y, 3)); // one move of y
  for (uint32_t Z : {0u, 1u, 2u, 4u})
    Want.insert(pt(1, 2, Z)); // one move of z
  CHECK(F.region(S) == unseen(F, Want));
  CHECK(unseen(F, Want).size() == 8);

  // Demanding 9 of 10 frees z: every (x, z) with y = 2, and y's moves.
  Want.clear();
  for (uint32_t X = 0; X < 10; ++X)
    for (uint32_t Z = 0; Z < 5; ++Z)
      Want.insert(pt(X, 2, Z));
  for (uint32_t Y : {0u, 1u})
    Want.insert(pt(1, Y, 3));
  CHECK(F.region(S, 0.9) == unseen(F, Want));
  CHECK(unseen(F, Want).size() == 42);
}

TEST_CASE("the region leaves out pending and disallowed points",
          "[strategy][region]") {
  Fixture F;
  Space S = xyz();
  std::set<Point> All = F.region(S);
  REQUIRE(All.count(pt(0, 2, 3)));
  F.Seen.markPending(pt(0, 2, 3));
  std::set<Point> Less = F.region(S);
  CHECK(Less.size() == All.size() - 1);
  CHECK(!Less.count(pt(0, 2, 3)));

  // In a constrained space only allowed points, in the allowed order
  // (z freed, so that both parts have some).
  Space C = xyz();
  for (uint32_t X = 0; X < 10; ++X)
    for (uint32_t Y = 0; Y < 3; ++Y)
      for (uint32_t Z = 0; Z < 5; ++Z)
        if ((X + Z) % 2 == 0)
          C.Allowed.push_back(pt(X, Y, Z));
  Rng R(1);
  Region Near = bestRegion(C, F.Good, F.Seen, 10, 0.9, 1000, R);
  REQUIRE(!Near.Moves.empty());
  REQUIRE(!Near.Rest.empty());
  std::vector<Point> Ps = all(Near);
  std::set<Point> Want;
  for (const Point &P : F.region(S, 0.9))
    if (C.contains(P))
      Want.insert(P);
  CHECK(std::set<Point>(Ps.begin(), Ps.end()) == Want);
  for (const std::vector<Point> *Part : {&Near.Moves, &Near.Rest})
    for (size_t I = 1; I < Part->size(); ++I)
      CHECK(*C.Allowed.indexOf((*Part)[I - 1]) <
            *C.Allowed.indexOf((*Part)[I]));
}

TEST_CASE("the region needs enough points and respects its limit",
          "[strategy][region]") {
  Space S = xyz();
  Fixture F;
  Rng R(1);
  auto Few = std::span(F.Good).first(9);
  Region None = bestRegion(S, Few, F.Seen, 10, 0.7, 1000, R);
  CHECK(None.Moves.empty());
  CHECK(None.Rest.empty());

  // Freed z: 42 points, 8 of them moves (x to 0 or 9, y's 2 and z's 4); a
  // limit of 5 draws a subset of the moves, the same one for the same seed.
  std::set<Point> All = F.region(S, 0.9);
  REQUIRE(All.size() == 42);
  std::set<Point> A = F.region(S, 0.9, 5, 7), B = F.region(S, 0.9, 5, 7);
  CHECK(A.size() == 5);
  CHECK(A == B);
  for (const Point &P : A) {
    CHECK(All.count(P));
    CHECK(moved(P, pt(1, 2, 3)) == 1);
  }
  // A limit of 10 keeps every move and two of the rest.
  Rng R2(7);
  Region Ten = bestRegion(S, F.Good, F.Seen, 10, 0.9, 10, R2);
  CHECK(Ten.Moves.size() == 8);
  CHECK(Ten.Rest.size() == 2);
}

TEST_CASE("a sequence in the region is kept or moved by one edit",
          "[strategy][region]") {
  Space S({sequenceParam("passes", 4, 3), ordinalParam("opt", 3)});
  std::vector<std::pair<double, Point>> Good;
  Observations Seen;
  // The best is [1;2] at opt 2; the others vary both.
  std::vector<Point> Ps = {Point{{{1, 2}, {2}}}, Point{{{1}, {2}}},
                           Point{{{3, 2}, {0}}}, Point{{{0}, {1}}}};
  for (size_t I = 0; I < Ps.size(); ++I) {
    Good.push_back({1.0 + static_cast<double>(I), Ps[I]});
    Seen.observe(Ps[I], 1.0 + static_cast<double>(I));
  }
  Rng R(3);
  std::vector<Point> Near = all(bestRegion(S, Good, Seen, 4, 0.7, 1000, R));
  REQUIRE(!Near.empty());
  std::vector<Point> Edits = S.neighbours(Ps[0]);
  for (const Point &P : Near) {
    CHECK(S.contains(P));
    CHECK(!Seen.seen(P));
    if (P.Values[0] != Ps[0].Values[0]) {
      // A moved sequence: one edit of the best's, opt unchanged.
      CHECK(P.Values[1] == Ps[0].Values[1]);
      CHECK(std::find(Edits.begin(), Edits.end(), P) != Edits.end());
    }
  }
  // opt is free (2 of 4 agree, fewer than 0.7): its other values with the
  // best's sequence.
  for (uint32_t O : {0u, 1u})
    CHECK(std::find(Near.begin(), Near.end(),
                    Point{{{1, 2}, {O}}}) != Near.end());
}

TEST_CASE("a stuck portfolio tries the best point's moves first",
          "[strategy][region]") {
  // 40 random points with random times: the best points agree on nothing,
  // so the rest of the region is nearly the whole space (4096 points), and
  // the best's 28 one-parameter moves are few among them.
  Space S = fourByEight();
  auto St = makeStrategy("portfolio", S, StrategyOptions{3, 0});
  REQUIRE(St);
  Rng R(11);
  std::uniform_int_distribution<uint32_t> V(0, 7);
  std::uniform_real_distribution<double> T(2, 3);
  std::set<Point> Seen;
  Point Best;
  double BestT = 10;
  while (Seen.size() < 40) {
    Point P{{{V(R)}, {V(R)}, {V(R)}, {V(R)}}};
    if (!Seen.insert(P).second)
      continue;
    double Time = T(R);
    (*St)->observe(P, Time);
    if (Time < BestT) {
      BestT = Time;
      Best = P;
    }
  }
  std::set<Point> Moves = unseenMoves(Best, Seen);
  REQUIRE(Moves.size() >= 20);
  // Nothing beats the best from here on: the GA's slots, half of them the
  // region's, soon take every proposal. Four proposals a move are enough
  // when the moves come first; among the whole region ranked as one, they
  // would not all be picked.
  size_t Proposed = proposeUntil(**St, Moves, 4 * Moves.size());
  INFO("proposals " << Proposed);
  CHECK(Moves.empty());
}

TEST_CASE("an improving portfolio gives BO's slots to the best point's moves",
          "[strategy][region]") {
  // Eleven random points, then a twelfth faster than all: the search has
  // just improved, so BO proposes nearly every point and the GA's slots
  // (and with them the region) are few. Half of BO's slots go to the best
  // point's unseen one-parameter moves, at most 28 of the space's 4096
  // points. Ten runs of different seeds.
  Space S = fourByEight();
  size_t Moved = 0, Proposed = 0;
  for (uint64_t Seed = 1; Seed <= 10; ++Seed) {
    auto St = makeStrategy("portfolio", S, StrategyOptions{Seed, 0});
    REQUIRE(St);
    Rng R(Seed + 100);
    std::uniform_int_distribution<uint32_t> V(0, 7);
    std::uniform_real_distribution<double> T(2, 3);
    std::set<Point> Seen;
    Point Best;
    while (Seen.size() < 12) {
      Point P{{{V(R)}, {V(R)}, {V(R)}, {V(R)}}};
      if (!Seen.insert(P).second)
        continue;
      Best = P;
      (*St)->observe(P, Seen.size() < 12 ? T(R) : 1.0);
    }
    std::set<Point> Moves = unseenMoves(Best, Seen);
    std::vector<Point> Ps = (*St)->propose(20);
    REQUIRE(Ps.size() == 20);
    Proposed += Ps.size();
    for (const Point &P : Ps)
      Moved += Moves.count(P);
  }
  // 97 of the 200 are moves. BO's own picks favour the best point's
  // neighbours too: with the moves' share set to 0 (a temporary edit), 72
  // of 200 were moves.
  INFO("moves " << Moved << " of " << Proposed);
  CHECK(Moved * 100 >= Proposed * 42);
}

TEST_CASE("the other basins are the points far from the best",
          "[strategy][region]") {
  std::vector<std::pair<double, Point>> Good = {
      {3.0, pt(1, 2, 3)}, {1.0, pt(1, 2, 4)}, {2.0, pt(5, 0, 0)},
      {4.0, pt(5, 2, 0)}, {1.0, pt(9, 1, 0)}};
  // The best is (1, 2, 4), the first of the two at 1.0; (9, 1, 0) ties with
  // it and differs in all three parameters, so it is another basin's.
  auto Far = otherBasins(Good, 3);
  REQUIRE(Far.size() == 2);
  CHECK(Far[0].second == pt(5, 0, 0));
  CHECK(Far[1].second == pt(9, 1, 0));
  auto Two = otherBasins(Good, 2);
  REQUIRE(Two.size() == 3);
  CHECK(Two[1].second == pt(5, 2, 0));
  CHECK(otherBasins(Good, 4).empty());
  CHECK(otherBasins({}, 3).empty());
}

TEST_CASE("a portfolio whose best point's region is spent looks at another "
          "basin",
          "[strategy][region]") {
  // Basin A: its best (0, 0, 0, 0) and every one of its moves, slower than
  // everything else. Basin B, four parameters away: its best (5, 5, 5, 5)
  // and 11 of its 28 moves, none with a 0. A's moves are all seen, and the
  // nine best after A's best are B's, which agree with it on nothing, so
  // the rest of A's region is nearly the whole space (4096 points), where
  // B's 17 unseen moves are few. B's own region is those moves.
  Space S = fourByEight();
  auto St = makeStrategy("portfolio", S, StrategyOptions{5, 0});
  REQUIRE(St);
  auto P4 = [](uint32_t A, uint32_t B, uint32_t C, uint32_t D) {
    return Point{{{A}, {B}, {C}, {D}}};
  };
  std::set<Point> Seen;
  auto See = [&](const Point &P, double T) {
    REQUIRE(Seen.insert(P).second);
    (*St)->observe(P, T);
  };
  const Point A0 = P4(0, 0, 0, 0);
  See(A0, 1.0);
  for (const Point &P : unseenMoves(A0, Seen))
    See(P, 3.0);
  const Point B0 = P4(5, 5, 5, 5);
  See(B0, 2.0);
  std::set<Point> BMoves = unseenMoves(B0, Seen);
  unsigned Taken = 0;
  for (auto It = BMoves.begin(); It != BMoves.end() && Taken < 11;) {
    if ((*It).Values[0][0] != 0 && (*It).Values[1][0] != 0 &&
        (*It).Values[2][0] != 0 && (*It).Values[3][0] != 0) {
      See(*It, 2.5);
      It = BMoves.erase(It);
      ++Taken;
    } else {
      ++It;
    }
  }
  REQUIRE(BMoves.size() == 17);
  // Nothing beats A's best from here on. A quarter of the region's slots
  // go to B's region, whose moves come first; ranked among A's whole rest,
  // they would not all be picked. Once the search has settled, half of the
  // slots look away from A instead (the next test), so the region has
  // about half as many as before.
  size_t Proposed = proposeUntil(**St, BMoves, 16 * BMoves.size());
  INFO("proposals " << Proposed << ", B's moves left " << BMoves.size());
  CHECK(BMoves.empty());
}

TEST_CASE("the far points are unseen and away from the best",
          "[strategy][region]") {
  Fixture F;
  Space S = xyz();
  Rng R(3);
  std::vector<Point> Far = farPoints(S, F.Good, F.Seen, 2, 1000, R);
  // Every unseen point of the 150 two or more parameters from the best
  // (1, 2, 3): 150 less the best and its 9 + 2 + 4 moves is 134, of which
  // (9, 2, 0) and (0, 2, 4) are seen (the other seen points are moves).
  std::set<Point> Set(Far.begin(), Far.end());
  CHECK(Set.size() == Far.size());
  for (const Point &P : Far) {
    CHECK(moved(P, pt(1, 2, 3)) >= 2);
    CHECK_FALSE(F.Seen.seen(P));
  }
  CHECK(Far.size() == 134 - 2);
  Rng R2(3);
  CHECK(farPoints(S, F.Good, F.Seen, 2, 10, R2).size() == 10);
  // Three parameters away: 9 * 2 * 4 points, none seen.
  Rng R3(3);
  std::vector<Point> Three = farPoints(S, F.Good, F.Seen, 3, 1000, R3);
  CHECK(Three.size() == 9 * 2 * 4);
  for (const Point &P : Three)
    CHECK(moved(P, pt(1, 2, 3)) == 3);
  Rng R4(3);
  CHECK(farPoints(S, {}, F.Seen, 2, 10, R4).empty());
}

TEST_CASE("a settled portfolio looks away from its basin",
          "[strategy][region]") {
  // The best point (0, 0, 0, 0) and its 28 one-parameter moves, slower:
  // every good point is in one basin, the GA breeds from it, the best
  // point's region is spent (its moves are seen and the ten best agree on
  // nearly everything), and nothing the search proposes from here on is
  // faster. Once 30 evaluations go by without a new best, half of the
  // slots look away: points three or more parameters from the best, ranked
  // by BO's acquisition.
  Space S = fourByEight();
  size_t Away = 0, Proposed = 0;
  for (uint64_t Seed = 1; Seed <= 5; ++Seed) {
    auto St = makeStrategy("portfolio", S, StrategyOptions{Seed, 0});
    REQUIRE(St);
    const Point A0{{{0}, {0}, {0}, {0}}};
    std::set<Point> Seen = {A0};
    (*St)->observe(A0, 1.0);
    double T = 1.5;
    for (const Point &P : unseenMoves(A0, {})) {
      Seen.insert(P);
      (*St)->observe(P, T += 0.01);
    }
    // Two more evaluations to settle, then 40 more.
    for (int I = 0; I < 42; ++I) {
      std::vector<Point> Ps = (*St)->propose(1);
      REQUIRE(Ps.size() == 1);
      REQUIRE(Seen.insert(Ps[0]).second);
      if (I >= 2) {
        ++Proposed;
        Away += moved(Ps[0], A0) >= 3;
      }
      (*St)->observe(Ps[0], 4.0);
    }
  }
  // 113 of the 200 are three or more parameters away; without the look
  // away (a temporary edit that never settles), 13 of 200.
  INFO("away " << Away << " of " << Proposed);
  CHECK(Away * 100 >= Proposed * 35);
}
