// The line diff of `r3 export`: shortest edit scripts (checked against the
// longest common subsequence computed by dynamic programming on random
// texts), and the unified format, hunk by hunk.
#include "Catch.h"

#include "support/Diff.h"

#include <random>

using namespace r3;

namespace {
std::vector<std::string_view> lines(const std::vector<std::string> &S) {
  return {S.begin(), S.end()};
}

/// B rebuilt from A by the script; also checks that the script walks both
/// texts in order and that kept lines are equal.
std::vector<std::string_view> apply(const std::vector<std::string_view> &A,
                                    const std::vector<std::string_view> &B,
                                    const std::vector<DiffOp> &Ops) {
  std::vector<std::string_view> Out;
  size_t I = 0, J = 0;
  for (const DiffOp &Op : Ops) {
    REQUIRE(Op.Old == I);
    REQUIRE(Op.New == J);
    if (Op.Kind == DiffKind::Equal) {
      REQUIRE(A[I] == B[J]);
      Out.push_back(A[I]);
    } else if (Op.Kind == DiffKind::Insert) {
      Out.push_back(B[J]);
    }
    I += Op.Kind != DiffKind::Insert;
    J += Op.Kind != DiffKind::Delete;
  }
  CHECK(I == A.size());
  return Out;
}

size_t edits(const std::vector<DiffOp> &Ops) {
  size_t N = 0;
  for (const DiffOp &Op : Ops)
    N += Op.Kind != DiffKind::Equal;
  return N;
}

size_t lcs(const std::vector<std::string_view> &A,
           const std::vector<std::string_view> &B) {
  std::vector<std::vector<size_t>> T(A.size() + 1,
                                     std::vector<size_t>(B.size() + 1, 0));
  for (size_t I = 1; I <= A.size(); ++I)
    for (size_t J = 1; J <= B.size(); ++J)
      T[I][J] = A[I - 1] == B[J - 1] ? T[I - 1][J - 1] + 1
                                     : std::max(T[I - 1][J], T[I][J - 1]);
  return T[A.size()][B.size()];
}
} // namespace

TEST_CASE("splitLines keeps each line's newline", "[support][diff]") {
  CHECK(splitLines("").empty());
  CHECK(splitLines("a\nb\n") == std::vector<std::string_view>{"a\n", "b\n"});
  CHECK(splitLines("a\n\nb") ==
        std::vector<std::string_view>{"a\n", "\n", "b"});
}

TEST_CASE("the edit script of Myers' example is shortest", "[support][diff]") {
  // ABCABBA -> CBABAC: D = 5 (the paper's figure 1).
  std::vector<std::string> A{"A", "B", "C", "A", "B", "B", "A"},
      B{"C", "B", "A", "B", "A", "C"};
  auto Ops = diffLines(lines(A), lines(B));
  CHECK(edits(Ops) == 5);
  CHECK(apply(lines(A), lines(B), Ops) == lines(B));
}

TEST_CASE("edit scripts of random texts are shortest and rebuild the new text",
          "[support][diff]") {
  std::mt19937 R(12345);
  const std::vector<std::string> Alphabet{"a", "b", "c", "d"};
  for (int Trial = 0; Trial < 500; ++Trial) {
    std::vector<std::string> A, B;
    size_t NA = R() % 30, NB = R() % 30;
    unsigned Letters = 1 + R() % 4; // few letters: many equal lines
    for (size_t I = 0; I < NA; ++I)
      A.push_back(Alphabet[R() % Letters]);
    for (size_t I = 0; I < NB; ++I)
      B.push_back(Alphabet[R() % Letters]);
    auto Ops = diffLines(lines(A), lines(B));
    INFO("trial " << Trial);
    CHECK(apply(lines(A), lines(B), Ops) == lines(B));
    CHECK(edits(Ops) == A.size() + B.size() - 2 * lcs(lines(A), lines(B)));
    // Within a run of changes, deletions come first (as diff(1) prints).
    for (size_t I = 1; I < Ops.size(); ++I)
      CHECK_FALSE((Ops[I - 1].Kind == DiffKind::Insert &&
                   Ops[I].Kind == DiffKind::Delete));
  }
}

TEST_CASE("equal texts have an empty diff", "[support][diff]") {
  CHECK(unifiedDiff("x\ny\n", "x\ny\n", "a/f", "b/f").empty());
  CHECK(unifiedDiff("", "", "a/f", "b/f").empty());
}

TEST_CASE("a unified diff has hunks with three lines of context",
          "[support][diff]") {
  std::string Old, New;
  for (int I = 1; I <= 20; ++I) {
    Old += std::to_string(I) + "\n";
    New += (I == 5 ? "five\n" : I == 16 ? "" : std::to_string(I) + "\n");
  }
  CHECK(unifiedDiff(Old, New, "a/k.c", "b/k.c") == "--- a/k.c\n"
                                                   "+++ b/k.c\n"
                                                   "@@ -2,7 +2,7 @@\n"
                                                   " 2\n 3\n 4\n-5\n+five\n"
                                                   " 6\n 7\n 8\n"
                                                   "@@ -13,7 +13,6 @@\n"
                                                   " 13\n 14\n 15\n-16\n"
                                                   " 17\n 18\n 19\n");
}

TEST_CASE("changes closer than two contexts share a hunk", "[support][diff]") {
  std::string Old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string New = "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n";
  CHECK(unifiedDiff(Old, New, "a", "b") == "--- a\n+++ b\n"
                                           "@@ -1,9 +1,9 @@\n"
                                           " 1\n-2\n+TWO\n 3\n 4\n 5\n 6\n"
                                           " 7\n-8\n+EIGHT\n 9\n");
}

TEST_CASE("insertions into an empty text and a missing final newline",
          "[support][diff]") {
  CHECK(unifiedDiff("", "a\nb\n", "a/f", "b/f") ==
        "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  CHECK(unifiedDiff("a\nb", "a\nc", "a/f", "b/f") ==
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n"
        "\\ No newline at end of file\n+c\n"
        "\\ No newline at end of file\n");
  CHECK(unifiedDiff("a\n", "a", "a/f", "b/f") ==
        "--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n-a\n+a\n"
        "\\ No newline at end of file\n");
}
