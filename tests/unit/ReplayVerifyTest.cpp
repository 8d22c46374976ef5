// Verification rules: bitwise by default, tolerances over a named element
// type, NaN rules, unchanged regions, return values, poisoning, messages.
#include "Catch.h"

#include "replay/Verify.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace r3;

namespace {
template <typename T> std::vector<uint8_t> bytes(std::vector<T> V) {
  std::vector<uint8_t> B(V.size() * sizeof(T));
  std::memcpy(B.data(), V.data(), B.size());
  return B;
}

VerifySettings tolerance(ToleranceKind K, double V,
                         ElementType T = ElementType::F32) {
  VerifySettings S;
  S.Tolerance = K;
  S.Value = V;
  S.Type = T;
  return S;
}

VerifyReport check(const VerifySettings &S, const std::vector<uint8_t> &E,
                   const std::vector<uint8_t> &A,
                   RegionRole Role = RegionRole::Output) {
  Verifier V(S);
  V.checkRegion({"region 'C' (heap 0x55d0c0a0 +8192)", E, A, Role});
  return V.report();
}

const float NaN = std::numeric_limits<float>::quiet_NaN();
} // namespace

TEST_CASE("verify: identical regions pass, bitwise by default") {
  auto E = bytes<float>({1.5f, 2.0f});
  CHECK(check({}, E, E).passed());
  auto R = check({}, E, bytes<float>({1.5f, 2.25f}));
  REQUIRE_FALSE(R.passed());
  CHECK(R.Mismatches == 1); // one byte of 2.0f and 2.25f differs
  CHECK(R.First[0] == "region 'C' (heap 0x55d0c0a0 +8192): byte 6: expected "
                      "0x00, got 0x10");
}

TEST_CASE("verify: a named dtype without tolerance compares elements "
          "bitwise") {
  VerifySettings S;
  S.Type = ElementType::F32;
  auto R = check(S, bytes<float>({0.0f}), bytes<float>({-0.0f}));
  REQUIRE(R.Mismatches == 1);
  CHECK(R.First[0] == "region 'C' (heap 0x55d0c0a0 +8192): element 0 (f32): "
                      "expected 0, got -0 (not bitwise equal)");
}

TEST_CASE("verify: abs tolerance") {
  auto S = tolerance(ToleranceKind::Abs, 1e-6);
  auto E = bytes<float>({1.5f, 1.0f, 7.0f});
  CHECK(check(S, E, bytes<float>({1.5f, 1.0000005f, 7.0f})).passed());
  auto R = check(S, bytes<float>({0, 1.5f}), bytes<float>({0, 2.25f}));
  REQUIRE(R.Mismatches == 1);
  CHECK(R.First[0] == "region 'C' (heap 0x55d0c0a0 +8192): element 1 (f32): "
                      "expected 1.5, got 2.25 (abs error 0.75 > 1e-06)");
  CHECK(R.message() ==
        "1 mismatch in 1 output: region 'C' (heap 0x55d0c0a0 +8192): element "
        "1 (f32): expected 1.5, got 2.25 (abs error 0.75 > 1e-06)");
}

TEST_CASE("verify: rel tolerance scales with the expected value") {
  auto S = tolerance(ToleranceKind::Rel, 1e-3);
  CHECK(check(S, bytes<float>({1000.0f}), bytes<float>({1000.5f})).passed());
  auto R = check(S, bytes<float>({1.0f}), bytes<float>({1.01f}));
  REQUIRE_FALSE(R.passed());
  CHECK(R.First[0].find("rel error 0.0099") != std::string::npos);
  // A recorded zero must be met exactly.
  CHECK_FALSE(check(S, bytes<float>({0.0f}), bytes<float>({1e-30f})).passed());
  CHECK(check(S, bytes<float>({0.0f}), bytes<float>({-0.0f})).passed());
}

TEST_CASE("verify: ulp tolerance counts representable values") {
  auto S = tolerance(ToleranceKind::Ulp, 2);
  float One = 1.0f;
  float Two = std::nextafter(std::nextafter(One, 2.0f), 2.0f);
  float Three = std::nextafter(Two, 2.0f);
  CHECK(check(S, bytes<float>({One}), bytes<float>({Two})).passed());
  auto R = check(S, bytes<float>({One}), bytes<float>({Three}));
  REQUIRE_FALSE(R.passed());
  CHECK(R.First[0].find("(3 ulp > 2)") != std::string::npos);
  // Across zero: the smallest positive and negative denormals are 2 apart.
  float Tiny = std::numeric_limits<float>::denorm_min();
  CHECK(check(S, bytes<float>({Tiny}), bytes<float>({-Tiny})).passed());
}

TEST_CASE("verify: f64 elements") {
  auto S = tolerance(ToleranceKind::Abs, 1e-9, ElementType::F64);
  CHECK(check(S, bytes<double>({1.0}), bytes<double>({1.0 + 1e-12})).passed());
  auto R = check(S, bytes<double>({1.0, 2.0}), bytes<double>({1.0, 2.5}));
  REQUIRE(R.Mismatches == 1);
  CHECK(R.First[0] == "region 'C' (heap 0x55d0c0a0 +8192): element 1 (f64): "
                      "expected 2, got 2.5 (abs error 0.5 > 1e-09)");
}

TEST_CASE("verify: NaN rules") {
  for (auto K : {ToleranceKind::Abs, ToleranceKind::Rel, ToleranceKind::Ulp}) {
    auto S = tolerance(K, 1e9);
    // A NaN where a number was recorded never passes, however loose.
    auto R = check(S, bytes<float>({1.0f}), bytes<float>({NaN}));
    REQUIRE_FALSE(R.passed());
    CHECK(R.First[0].find("got nan (a nan where a number was recorded)") !=
          std::string::npos);
    // NaN where NaN was recorded passes, whatever its payload.
    uint32_t Other = 0x7fc00123;
    float OtherNaN;
    std::memcpy(&OtherNaN, &Other, 4);
    CHECK(check(S, bytes<float>({NaN}), bytes<float>({OtherNaN})).passed());
    // A number where a NaN was recorded fails.
    CHECK_FALSE(check(S, bytes<float>({NaN}), bytes<float>({1.0f})).passed());
  }
  // Infinities: equal passes, even under abs (inf - inf is nan).
  auto S = tolerance(ToleranceKind::Abs, 1e-6);
  float Inf = std::numeric_limits<float>::infinity();
  CHECK(check(S, bytes<float>({Inf}), bytes<float>({Inf})).passed());
  CHECK_FALSE(check(S, bytes<float>({Inf}), bytes<float>({-Inf})).passed());
}

TEST_CASE("verify: unchanged regions must stay bitwise, whatever the "
          "tolerance") {
  auto S = tolerance(ToleranceKind::Abs, 1.0);
  auto E = bytes<float>({1.0f});
  auto R = check(S, E, bytes<float>({1.0000001f}), RegionRole::Unchanged);
  REQUIRE_FALSE(R.passed());
  CHECK(R.First[0] == "region 'C' (heap 0x55d0c0a0 +8192): byte 0: expected "
                      "0x00, got 0x01 (the original left this region "
                      "unchanged)");
}

TEST_CASE("verify: trailing bytes past the last element are bitwise") {
  auto S = tolerance(ToleranceKind::Abs, 1.0);
  auto E = bytes<float>({1.0f});
  auto A = bytes<float>({1.5f});
  E.push_back(7);
  A.push_back(8);
  auto R = check(S, E, A);
  REQUIRE(R.Mismatches == 1);
  CHECK(R.First[0].find("byte 4: expected 0x07, got 0x08") !=
        std::string::npos);
}

TEST_CASE("verify: every mismatch is counted, the first few described") {
  std::vector<float> E(100, 1.0f), A(100, 2.0f);
  auto R = check(tolerance(ToleranceKind::Abs, 0.5), bytes(E), bytes(A));
  CHECK(R.Mismatches == 100);
  CHECK(R.First.size() == Verifier::MaxDescribed);
  // Consecutive mismatches of one region share its label.
  CHECK(R.message().starts_with(
      "100 mismatches in 1 output: region 'C' (heap 0x55d0c0a0 +8192): "
      "element 0 (f32): expected 1, got 2 (abs error 1 > 0.5); element 1 "
      "(f32): expected 1, got 2 (abs error 1 > 0.5); element 2"));
  CHECK(R.message().ends_with("; and 96 more"));
}

TEST_CASE("verify: return values") {
  VerifySettings Exact;
  Verifier V(Exact);
  V.checkReturn(ValueType::Bits, 4, 0x1234, 0xdead00001234ull); // high bytes
  CHECK(V.report().passed());
  V.checkReturn(ValueType::Bits, 4, 7, 8);
  REQUIRE(V.report().Mismatches == 1);
  CHECK(V.report().First[0] ==
        "return value: expected 0x7, got 0x8 (not bitwise equal)");

  auto Bits = [](float F) {
    uint32_t B;
    std::memcpy(&B, &F, 4);
    return uint64_t(B);
  };
  Verifier Tol(tolerance(ToleranceKind::Abs, 0.1));
  Tol.checkReturn(ValueType::F32, 4, Bits(1.0f), Bits(1.05f));
  CHECK(Tol.report().passed());
  Tol.checkReturn(ValueType::F32, 4, Bits(1.0f), Bits(NaN));
  REQUIRE(Tol.report().Mismatches == 1);
  CHECK(Tol.report().First[0] == "return value (f32): expected 1, got nan (a "
                                 "nan where a number was recorded)");
}

TEST_CASE("verify: regions are labelled by name or index") {
  RegionInfo Named{0x55d0c0a0, 8192, RegionKind::Heap, "C", true};
  CHECK(regionLabel(Named, 2) == "region 'C' (heap 0x55d0c0a0 +8192)");
  RegionInfo Anon{0x1000, 16, RegionKind::Mmap, "", false};
  CHECK(regionLabel(Anon, 3) == "region 3 (mmap 0x1000 +16)");
}

TEST_CASE("verify: poisoning covers the changed span, nothing else") {
  std::vector<uint8_t> Pre = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> Post = {1, 9, 3, 4, 9, 6};
  std::vector<uint8_t> Live = Pre;
  poisonOutputs(Live, Pre, Post);
  CHECK(Live == std::vector<uint8_t>{1, 0xff, 0xff, 0xff, 0xff, 6});
  std::vector<uint8_t> Same = Pre;
  poisonOutputs(Same, Pre, Pre);
  CHECK(Same == Pre);
}

TEST_CASE("verify: tolerance parsing") {
  VerifySettings S;
  REQUIRE_FALSE(parseTolerance("abs:1e-6", S));
  CHECK(S.Tolerance == ToleranceKind::Abs);
  CHECK(S.Value == 1e-6);
  REQUIRE_FALSE(parseTolerance("ulp:4", S));
  CHECK(S.Tolerance == ToleranceKind::Ulp);
  REQUIRE_FALSE(parseTolerance("exact", S));
  CHECK(S.Tolerance == ToleranceKind::Exact);
  for (const char *Bad : {"abs", "abs:", "abs:x", "abs:-1", "ulp:1.5",
                          "fuzzy:1", "rel:inf", "abs:1e-6x"}) {
    Error E = parseTolerance(Bad, S);
    REQUIRE(E);
    CHECK(E.message() == "tolerance '" + std::string(Bad) +
                             "': expected exact, abs:X, rel:X or ulp:N (X a "
                             "non-negative number, N a non-negative integer)");
  }
}

TEST_CASE("verify: runs after the verification run are named and explained") {
  CHECK(runName(0, 2) == "warm-up run 1");
  CHECK(runName(1, 2) == "warm-up run 2");
  CHECK(runName(2, 2) == "timed run 1");
  CHECK(runName(4, 0) == "timed run 5");
  std::vector<uint8_t> E = {1, 2}, A = {1, 3};
  auto R = check(VerifySettings{}, E, A);
  CHECK(laterRunMessage(3, "timed run 2", "every run's outputs are checked",
                        R) ==
        "launch 3: timed run 2 gave a different result than the verification "
        "run, which passed (every run's outputs are checked): 1 mismatch in 1 "
        "output: region 'C' (heap 0x55d0c0a0 +8192): byte 1: expected 0x02, "
        "got 0x03");
}
