// Every strategy behind the Strategy interface: finds the optimum of small
// known spaces, never proposes a point twice, respects pending and forgotten
// points, fills batches with distinct points, stops when the space is
// exhausted, and stays inside constrained spaces and pass sequences.
#include "Catch.h"

#include "SearchTestSpaces.h"

#include <set>

using namespace r3::search;
using namespace r3::search::testing;

namespace {

const char *const AllStrategies[] = {"random", "grid", "tpe",
                                     "bo",     "ga",   "portfolio"};

std::unique_ptr<Strategy> make(const std::string &Name, const Space &S,
                               uint64_t Seed = 1) {
  auto St = makeStrategy(Name, S, StrategyOptions{Seed, 0});
  REQUIRE(St);
  return std::move(*St);
}

Space gridSpace() {
  return Space(
      {ordinalParam("x", 6), ordinalParam("y", 5), categoricalParam("c", 3)});
}

/// The bowl over x and y, with category 2 the cheapest.
std::optional<double> gridObjective(const Point &P) {
  double C = P.Values[2][0] == 2 ? 0 : 0.5 + P.Values[2][0];
  return *bowl({4, 1})(P) + C;
}

} // namespace

TEST_CASE("every strategy finds the optimum of a small space", "[strategy]") {
  Space S = gridSpace(); // 90 points, optimum 1.0 at x=4, y=1, c=2
  for (const char *Name : AllStrategies) {
    INFO(Name);
    auto St = make(Name, S);
    CHECK(St->name() == Name);
    Run R = runStrategy(*St, S, gridObjective, 90, 1, 1.0);
    REQUIRE(R.Best);
    CHECK(std::abs(*R.Best - 1.0) < 1e-9);
    CHECK(R.Duplicates == 0);
    CHECK(R.Invalid == 0);
    // The whole space was visited at most once.
    CHECK(R.Evaluations <= 90);
  }
}

TEST_CASE("every strategy stops when the space is exhausted", "[strategy]") {
  Space S({ordinalParam("x", 4), categoricalParam("c", 2)});
  for (const char *Name : AllStrategies) {
    INFO(Name);
    auto St = make(Name, S, 7);
    Run R = runStrategy(*St, S, bowl({2}), 100, 3, 1.0);
    CHECK(R.Evaluations == 8);
    CHECK(R.Duplicates == 0);
    CHECK(St->propose(4).empty());
  }
}

TEST_CASE("grid search walks the space in lexicographic order", "[strategy]") {
  Space S({ordinalParam("x", 2), sequenceParam("p", 2, 2)});
  auto St = make("grid", S);
  std::vector<std::string> Order;
  for (std::vector<Point> Ps = St->propose(3); !Ps.empty(); Ps = St->propose(3))
    for (const Point &P : Ps) {
      Order.push_back(S.describe(P));
      St->observe(P, 1.0);
    }
  // Sequences count in shortlex order: [], [0], [1], [0;0], [0;1], ...
  REQUIRE(Order.size() == 14);
  CHECK(Order[0] == "x=0,p=[]");
  CHECK(Order[1] == "x=0,p=[0]");
  CHECK(Order[3] == "x=0,p=[0;0]");
  CHECK(Order[6] == "x=0,p=[1;1]");
  CHECK(Order[7] == "x=1,p=[]");
}

TEST_CASE("batches are distinct and avoid pending points", "[strategy]") {
  Space S = gridSpace();
  for (const char *Name : AllStrategies) {
    INFO(Name);
    auto St = make(Name, S, 3);
    Point Pending{{{4}, {1}, {2}}};
    St->markPending(Pending);
    std::set<Point> All;
    for (int Round = 0; Round < 5; ++Round) {
      std::vector<Point> Ps = St->propose(6);
      CHECK(Ps.size() == 6);
      for (const Point &P : Ps) {
        CHECK(P != Pending);
        CHECK(All.insert(P).second);
      }
      // Only half of each batch is observed; the rest stays pending.
      for (size_t I = 0; I < Ps.size(); I += 2)
        St->observe(Ps[I], gridObjective(Ps[I]));
    }
  }
}

TEST_CASE("a forgotten point may be proposed again", "[strategy]") {
  Space S({ordinalParam("x", 3)});
  for (const char *Name : AllStrategies) {
    INFO(Name);
    auto St = make(Name, S);
    std::vector<Point> Ps = St->propose(3);
    REQUIRE(Ps.size() == 3);
    CHECK(St->propose(1).empty());
    St->forget(Ps[1]);
    std::vector<Point> Again = St->propose(3);
    REQUIRE(Again.size() == 1);
    CHECK(Again[0] == Ps[1]);
  }
}

TEST_CASE("strategies stay inside a constrained space", "[strategy]") {
  Space S({ordinalParam("x", 10), ordinalParam("y", 10)});
  // Only points with x + y even are valid; the optimum is among them.
  for (uint32_t X = 0; X < 10; ++X)
    for (uint32_t Y = 0; Y < 10; ++Y)
      if ((X + Y) % 2 == 0)
        S.Allowed.push_back(Point{{{X}, {Y}}});
  for (const char *Name : AllStrategies) {
    INFO(Name);
    auto St = make(Name, S, 5);
    Run R = runStrategy(*St, S, bowl({6, 2}), 50, 2, 1.0);
    CHECK(R.Invalid == 0);
    CHECK(R.Duplicates == 0);
    CHECK(R.Evaluations == 50);
  }
}

TEST_CASE("strategies search pass sequences", "[strategy]") {
  // A pipeline of up to 3 passes from 6: the best is exactly [3;1] (time 1),
  // each pass costs 1 unless it is 3 or 1 at its place.
  Space S({sequenceParam("passes", 6, 3), ordinalParam("opt", 4)});
  Objective F = [](const Point &P) -> std::optional<double> {
    const std::vector<uint32_t> &V = P.Values[0];
    if (V.size() == 3 && V[0] == V[1] && V[1] == V[2])
      return std::nullopt; // some pipelines fail
    double T = 1 + 0.3 * std::abs(static_cast<int>(P.Values[1][0]) - 3);
    std::vector<uint32_t> Want = {3, 1};
    for (size_t I = 0; I < std::max(V.size(), Want.size()); ++I)
      T += I < V.size() && I < Want.size() && V[I] == Want[I] ? 0 : 1;
    return T;
  };
  for (const char *Name : {"random", "tpe", "bo", "ga", "portfolio"}) {
    INFO(Name);
    auto St = make(Name, S, 11);
    // 259 sequences x 4 levels = 1036 points; 150 evaluations.
    Run R = runStrategy(*St, S, F, 150, 4, 1.0);
    CHECK(R.Invalid == 0);
    CHECK(R.Duplicates == 0);
    REQUIRE(R.Best);
    CHECK(*R.Best <= 2.3);
  }
}

TEST_CASE("unknown strategies are named with a suggestion", "[strategy]") {
  Space S = gridSpace();
  auto St = makeStrategy("bayes", S, {});
  REQUIRE(!St);
  CHECK(St.error().message() ==
        "unknown strategy 'bayes'; did you mean 'bo'? (known: portfolio, bo, "
        "random, grid, tpe, ga)");
  auto Other = makeStrategy("gird", S, {});
  REQUIRE(!Other);
  CHECK(Other.error().message().find("did you mean 'grid'?") !=
        std::string::npos);
  CHECK(strategyNames().size() == 6);
}
