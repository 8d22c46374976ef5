// The best point's region (search/BestRegion.h), where the portfolio looks
// once its search is stuck: the parameters the best points agree on are
// kept, the others vary, one-parameter moves of the best are added, and
// seen, pending and disallowed points are left out.
#include "Catch.h"

#include "SearchTestSpaces.h"
#include "search/BestRegion.h"

#include <set>

using namespace r3::search;
using namespace r3::search::testing;

namespace {

Point pt(uint32_t X, uint32_t Y, uint32_t Z) { return Point{{{X}, {Y}, {Z}}}; }

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
    std::vector<Point> Ps = bestRegion(S, Good, Seen, 10, Agree, Limit, R);
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

  // In a constrained space only allowed points, in the allowed order.
  Space C = xyz();
  for (uint32_t X = 0; X < 10; ++X)
    for (uint32_t Y = 0; Y < 3; ++Y)
      for (uint32_t Z = 0; Z < 5; ++Z)
        if ((X + Z) % 2 == 0)
          C.Allowed.push_back(pt(X, Y, Z));
  Rng R(1);
  std::vector<Point> Ps = bestRegion(C, F.Good, F.Seen, 10, 0.7, 1000, R);
  REQUIRE(!Ps.empty());
  std::set<Point> Want;
  for (const Point &P : Less)
    if (C.contains(P))
      Want.insert(P);
  CHECK(std::set<Point>(Ps.begin(), Ps.end()) == Want);
  for (size_t I = 1; I < Ps.size(); ++I)
    CHECK(*C.Allowed.indexOf(Ps[I - 1]) < *C.Allowed.indexOf(Ps[I]));
}

TEST_CASE("the region needs enough points and respects its limit",
          "[strategy][region]") {
  Space S = xyz();
  Fixture F;
  Rng R(1);
  auto Few = std::span(F.Good).first(9);
  CHECK(bestRegion(S, Few, F.Seen, 10, 0.7, 1000, R).empty());

  // Freed z: 42 points; a limit of 5 draws a subset, the
  // same one for the same seed.
  std::set<Point> All = F.region(S, 0.9);
  REQUIRE(All.size() > 5);
  std::set<Point> A = F.region(S, 0.9, 5, 7), B = F.region(S, 0.9, 5, 7);
  CHECK(A.size() == 5);
  CHECK(A == B);
  for (const Point &P : A)
    CHECK(All.count(P));
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
  std::vector<Point> Region = bestRegion(S, Good, Seen, 4, 0.7, 1000, R);
  REQUIRE(!Region.empty());
  std::vector<Point> Edits = S.neighbours(Ps[0]);
  for (const Point &P : Region) {
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
    CHECK(std::find(Region.begin(), Region.end(),
                    Point{{{1, 2}, {O}}}) != Region.end());
}
