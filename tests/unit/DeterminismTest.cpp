// Run-to-run differences of a kernel's outputs and the tolerance proposed
// for them (replay/Determinism.h).
#include "Catch.h"

#include "replay/Determinism.h"

#include <cstring>
#include <vector>

using namespace r3;

namespace {
std::vector<uint8_t> floats(const std::vector<float> &V) {
  std::vector<uint8_t> B(V.size() * 4);
  std::memcpy(B.data(), V.data(), B.size());
  return B;
}
} // namespace

TEST_CASE("determinism: equal runs leave nothing to report") {
  auto A = floats({1, 2, 3, 4});
  RegionSpread S;
  S.add(A, A);
  CHECK(S.Differing == 0);
  CHECK(S.MaxRelF32 == 0);
  SpreadReport R;
  R.Runs = 3;
  CHECK(R.deterministic());
  CHECK(R.message() == "the outputs of 3 runs equal the recorded ones bitwise");
}

TEST_CASE("determinism: last-bit differences measured and covered") {
  auto Rec = floats({1.0f, 2.0f, 1000.0f, 4.0f});
  auto Run = floats({1.0f, 2.0000002f, 1000.0001f, 4.0f});
  RegionSpread S;
  S.Label = "region 'rho'";
  S.add(Rec, Run);
  CHECK(S.Differing > 0);
  CHECK(S.Differing <= 8);
  CHECK(S.MaxRelF32 > 0);
  CHECK(S.MaxRelF32 < 2e-7);
  SpreadReport R;
  R.Runs = 5;
  R.Regions.push_back(S);
  CHECK_FALSE(R.deterministic());
  CHECK(R.message().starts_with("region 'rho' differs in "));
  CHECK(R.message().find("over 5 runs (of 16)") != std::string::npos);
  // A power of ten at least ten times the largest difference, as f32.
  CHECK(R.proposal() == "tolerance = \"rel\", value = 1e-05, dtype = \"f32\"");
}

TEST_CASE("determinism: differences that are not small numbers propose none") {
  auto Rec = floats({1.0f, 2.0f});
  auto Run = floats({1.0f, 3.0f});
  RegionSpread S;
  S.add(Rec, Run);
  SpreadReport R;
  R.Runs = 2;
  R.Regions.push_back(S);
  CHECK(R.proposal().starts_with("the differences are not small numbers"));
}
