// The search-space model: sizes (with sequences and Allowed), enumeration
// order, uniform sampling, neighbourhoods, containment and canonical text.
#include "Catch.h"

#include "search/Space.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

using namespace r3::search;

namespace {

Param ordinal(std::string Name, std::vector<std::string> Values) {
  Param P;
  P.Name = std::move(Name);
  P.Kind = ParamKind::Ordinal;
  P.Values = std::move(Values);
  return P;
}

Param categorical(std::string Name, std::vector<std::string> Values) {
  Param P = ordinal(std::move(Name), std::move(Values));
  P.Kind = ParamKind::Categorical;
  return P;
}

Param sequence(std::string Name, std::vector<std::string> Alphabet,
               unsigned Min, unsigned Max) {
  Param P = ordinal(std::move(Name), std::move(Alphabet));
  P.Kind = ParamKind::Sequence;
  P.MinLength = Min;
  P.MaxLength = Max;
  return P;
}

Point point(std::vector<std::vector<uint32_t>> V) { return Point{std::move(V)}; }

/// block (3 ordinal) x pipeline (2 categorical) x passes (alphabet 2, 0..2).
Space mixedSpace() {
  return Space({ordinal("block", {"32", "64", "128"}),
                categorical("pipeline", {"default<O2>", "default<O3>"}),
                sequence("passes", {"licm", "gvn"}, 0, 2)});
}

} // namespace

TEST_CASE("space size multiplies parameters and sums sequence lengths",
          "[search][space]") {
  Space S = mixedSpace();
  // passes: 1 + 2 + 4 sequences.
  CHECK(S.size() == 3 * 2 * 7);
  Space Long({sequence("passes", std::vector<std::string>(40, "p"), 1, 12)});
  double Expected = 0;
  for (int L = 1; L <= 12; ++L)
    Expected += std::pow(40.0, L);
  CHECK(Long.size() == Expected);
  CHECK_FALSE(Long.enumerable());
  CHECK(S.enumerable());
  CHECK_FALSE(S.enumerable(41));
  S.Allowed = {point({{0}, {1}, {}}), point({{2}, {0}, {1, 0}})};
  CHECK(S.size() == 2);
}

TEST_CASE("enumerate lists every point once in lexicographic order",
          "[search][space]") {
  Space S = mixedSpace();
  std::vector<Point> All = S.enumerate();
  REQUIRE(All.size() == 42);
  CHECK(std::is_sorted(All.begin(), All.end()));
  CHECK(std::adjacent_find(All.begin(), All.end()) == All.end());
  for (const Point &P : All)
    CHECK(S.contains(P));
  CHECK(All.front() == point({{0}, {0}, {}}));
  CHECK(All.back() == point({{2}, {1}, {1, 1}}));

  S.Allowed = {point({{2}, {0}, {1}}), point({{0}, {1}, {}}),
               point({{2}, {0}, {1}})};
  std::vector<Point> Listed = S.enumerate();
  REQUIRE(Listed.size() == 2);
  CHECK(Listed[0] == point({{0}, {1}, {}}));
}

TEST_CASE("random draws every value of each parameter about equally often",
          "[search][space]") {
  Space S = mixedSpace();
  Rng R(7);
  std::map<uint32_t, int> Blocks;
  std::map<size_t, int> Lengths;
  const int N = 6000;
  for (int I = 0; I < N; ++I) {
    Point P = S.random(R);
    REQUIRE(S.contains(P));
    ++Blocks[P.Values[0][0]];
    ++Lengths[P.Values[2].size()];
  }
  REQUIRE(Blocks.size() == 3);
  for (auto [Value, Count] : Blocks)
    CHECK(std::abs(Count - N / 3) < N / 15);
  REQUIRE(Lengths.size() == 3);
  for (auto [Length, Count] : Lengths)
    CHECK(std::abs(Count - N / 3) < N / 15);
}

TEST_CASE("random with Allowed draws only allowed points, all of them",
          "[search][space]") {
  Space S = mixedSpace();
  S.Allowed = {point({{0}, {1}, {}}), point({{2}, {0}, {1, 0}}),
               point({{1}, {1}, {0}})};
  Rng R(3);
  std::set<Point> Seen;
  for (int I = 0; I < 300; ++I) {
    Point P = S.random(R);
    CHECK(std::find(S.Allowed.begin(), S.Allowed.end(), P) != S.Allowed.end());
    Seen.insert(P);
  }
  CHECK(Seen.size() == 3);
}

TEST_CASE("neighbours are one step away", "[search][space]") {
  Space S = mixedSpace();
  Point P = point({{0}, {1}, {0}});
  std::vector<Point> N = S.neighbours(P);
  std::set<Point> Set(N.begin(), N.end());
  CHECK(Set.size() == N.size());
  CHECK_FALSE(Set.count(P));
  for (const Point &Q : N)
    CHECK(S.contains(Q));
  // Ordinal: only 64 (no value below 32). Categorical: O2.
  CHECK(Set.count(point({{1}, {1}, {0}})));
  CHECK_FALSE(Set.count(point({{2}, {1}, {0}})));
  CHECK(Set.count(point({{0}, {0}, {0}})));
  // Sequence [licm]: remove, replace, insert before/after.
  CHECK(Set.count(point({{0}, {1}, {}})));
  CHECK(Set.count(point({{0}, {1}, {1}})));
  CHECK(Set.count(point({{0}, {1}, {1, 0}})));
  CHECK(Set.count(point({{0}, {1}, {0, 1}})));
  CHECK(Set.count(point({{0}, {1}, {0, 0}})));
  CHECK(N.size() == 1 + 1 + 1 + 1 + 3);

  // A swap of neighbours; no insertion beyond MaxLength.
  std::vector<Point> Full = S.neighbours(point({{1}, {0}, {0, 1}}));
  std::set<Point> FullSet(Full.begin(), Full.end());
  CHECK(FullSet.count(point({{1}, {0}, {1, 0}})));
  for (const Point &Q : Full)
    CHECK(Q.Values[2].size() <= 2);
}

TEST_CASE("neighbours with Allowed stay allowed and skip invalid ordinals",
          "[search][space]") {
  Space S({ordinal("x", {"1", "2", "4", "8"}), categorical("c", {"a", "b"})});
  S.Allowed = {point({{0}, {0}}), point({{2}, {0}}), point({{3}, {0}}),
               point({{0}, {1}}), point({{3}, {1}})};
  std::vector<Point> N = S.neighbours(point({{0}, {0}}));
  std::set<Point> Set(N.begin(), N.end());
  // x=2 is not allowed: the nearest allowed value above is x=4, not x=8.
  CHECK(Set == std::set<Point>{point({{2}, {0}}), point({{0}, {1}})});
  std::vector<Point> M = S.neighbours(point({{2}, {0}}));
  CHECK(std::set<Point>(M.begin(), M.end()) ==
        std::set<Point>{point({{0}, {0}}), point({{3}, {0}})});
}

TEST_CASE("neighbours with Allowed match their definition on random subsets",
          "[search][space]") {
  Space S({ordinal("x", {"1", "2", "4", "8", "16"}),
           ordinal("y", {"1", "2", "3"}), categorical("c", {"a", "b", "c"})});
  std::vector<Point> All = S.enumerate();
  Rng R(11);
  for (int Round = 0; Round < 20; ++Round) {
    S.Allowed.clear();
    for (const Point &P : All)
      if (std::bernoulli_distribution(0.5)(R))
        S.Allowed.push_back(P);
    for (const Point &P : All) {
      // By definition: every allowed point one categorical change away, and
      // per ordinal the allowed point with the closest value below and above
      // when only that ordinal differs.
      std::set<Point> Want;
      for (size_t I = 0; I < 3; ++I) {
        std::optional<Point> Below, Above;
        for (const Point &Q : S.Allowed) {
          size_t Diff = 0;
          for (size_t J = 0; J < 3; ++J)
            Diff += Q.Values[J] != P.Values[J];
          if (Diff != 1 || Q.Values[I] == P.Values[I])
            continue;
          if (I == 2)
            Want.insert(Q);
          else if (Q.Values[I][0] < P.Values[I][0]) {
            if (!Below || Q.Values[I][0] > Below->Values[I][0])
              Below = Q;
          } else if (!Above || Q.Values[I][0] < Above->Values[I][0]) {
            Above = Q;
          }
        }
        if (Below)
          Want.insert(*Below);
        if (Above)
          Want.insert(*Above);
      }
      std::vector<Point> N = S.neighbours(P);
      CHECK(std::set<Point>(N.begin(), N.end()) == Want);
      CHECK(S.contains(P) ==
            (std::find(S.Allowed.begin(), S.Allowed.end(), P) !=
             S.Allowed.end()));
    }
  }
}

TEST_CASE("Allowed edited after a lookup, and a copied space, are seen",
          "[search][space]") {
  Space S({ordinal("x", {"1", "2", "4"})});
  S.Allowed = {point({{0}})};
  CHECK_FALSE(S.contains(point({{2}})));
  S.Allowed.push_back(point({{2}}));
  CHECK(S.contains(point({{2}})));
  CHECK(S.neighbours(point({{0}})) == std::vector<Point>{point({{2}})});
  Space Copy = S;
  Copy.Allowed = {point({{0}})};
  CHECK_FALSE(Copy.contains(point({{2}})));
  CHECK(S.contains(point({{2}})));
}

TEST_CASE("contains checks shape, ranges, lengths and Allowed",
          "[search][space]") {
  Space S = mixedSpace();
  CHECK(S.contains(point({{2}, {1}, {1, 1}})));
  CHECK_FALSE(S.contains(point({{3}, {1}, {}})));
  CHECK_FALSE(S.contains(point({{0}, {2}, {}})));
  CHECK_FALSE(S.contains(point({{0}, {1}, {0, 0, 0}})));
  CHECK_FALSE(S.contains(point({{0}, {1}, {2}})));
  CHECK_FALSE(S.contains(point({{0, 1}, {1}, {}})));
  CHECK_FALSE(S.contains(point({{0}, {1}})));
  S.Allowed = {point({{0}, {1}, {}})};
  CHECK(S.contains(point({{0}, {1}, {}})));
  CHECK_FALSE(S.contains(point({{1}, {1}, {}})));
}

TEST_CASE("describe is canonical and unique", "[search][space]") {
  Space S = mixedSpace();
  CHECK(S.describe(point({{2}, {1}, {0, 1}})) ==
        "block=128,pipeline=default<O3>,passes=[licm;gvn]");
  CHECK(S.describe(point({{0}, {0}, {}})) ==
        "block=32,pipeline=default<O2>,passes=[]");
  std::set<std::string> Texts;
  for (const Point &P : S.enumerate())
    Texts.insert(S.describe(P));
  CHECK(Texts.size() == 42);
  CHECK(S.valueText(point({{2}, {1}, {0, 1}}), 2) == "licm,gvn");
  CHECK(S.valueText(point({{2}, {1}, {0, 1}}), 0) == "128");

  // Values that contain the separators still give distinct texts.
  // Unescaped, a=x,b="y,b=" and a="x,b=y",b="" would both read "a=x,b=y,b=".
  Space T({categorical("a", {"x", "x,b=y"}), categorical("b", {"y,b=", ""})});
  CHECK(T.describe(point({{0}, {0}})) != T.describe(point({{1}, {1}})));
  std::set<std::string> TTexts;
  for (const Point &P : T.enumerate())
    TTexts.insert(T.describe(P));
  CHECK(TTexts.size() == 4);
}

TEST_CASE("find returns a parameter's index", "[search][space]") {
  Space S = mixedSpace();
  CHECK(S.find("pipeline") == 1);
  CHECK(S.find("passes") == 2);
  CHECK(S.find("grid") == -1);
}
