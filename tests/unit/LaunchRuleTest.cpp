// Grid rules for changed block sizes, the address-span planner of CUDA
// replay, and the replay result's wire encoding of the CUDA fields.
#include "Catch.h"

#include "replay/LaunchRule.h"
#include "replay/ServerProtocol.h"
#include "replay/SpacePlan.h"

#include <cstring>

using namespace r3;

namespace {
LaunchInfo launchWith(int32_t N, int64_t M) {
  LaunchInfo L;
  L.Grid = {32, 24, 1};
  L.Block = {16, 16, 1};
  L.Params.resize(24);
  uint64_t P = 0xdead0000;
  std::memcpy(L.Params.data(), &P, 8);
  std::memcpy(L.Params.data() + 8, &N, 4);
  std::memcpy(L.Params.data() + 16, &M, 8);
  return L;
}

KernelInfo kernelWithParams() {
  KernelInfo K;
  K.Params = {{0, 8}, {8, 4}, {16, 8}};
  return K;
}

Dim3 apply(const std::string &Rule, Dim3 Block, const LaunchInfo &L,
           const std::vector<std::string> &Names = {}) {
  auto R = parseGridRule(Rule);
  REQUIRE(R);
  LaunchValues V{L.Grid, L.Block, Block,
                 paramValues(L, kernelWithParams(), Names)};
  auto G = applyGridRule(*R, V);
  if (!G)
    FAIL(G.error().message());
  return *G;
}

std::string applyError(const std::string &Rule, Dim3 Block) {
  LaunchInfo L = launchWith(500, 7);
  auto R = parseGridRule(Rule);
  if (!R)
    return R.error().message();
  LaunchValues V{L.Grid, L.Block, Block, paramValues(L, kernelWithParams())};
  auto G = applyGridRule(*R, V);
  REQUIRE_FALSE(G);
  return G.error().message();
}
bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}
} // namespace

TEST_CASE("keep-threads keeps each dimension's threads, rounding up") {
  LaunchInfo L = launchWith(500, 7);
  CHECK(apply("keep-threads", {32, 8, 1}, L) == Dim3{16, 48, 1});
  CHECK(apply("keep-threads", {24, 16, 1}, L) == Dim3{22, 24, 1}); // 512/24
  CHECK(apply("keep-grid", {64, 4, 1}, L) == Dim3{32, 24, 1});
}

TEST_CASE("grid expressions see the new block, the recorded launch and the "
          "scalar parameters") {
  LaunchInfo L = launchWith(500, 7);
  CHECK(apply("x=ceil(arg1 / block_x)", {128, 1, 1}, L) == Dim3{4, 24, 1});
  CHECK(apply("x = ceil(n / block_x); y = max(1, m - 6)", {256, 1, 1}, L,
              {"p", "n", "m"}) == Dim3{2, 1, 1});
  CHECK(apply("y=rec_grid_y * rec_block_y / block_y;x=(arg1 + block_x - 1) "
              "/ block_x - (arg1 + block_x - 1) % block_x / block_x",
              {100, 8, 1}, L) == Dim3{5, 48, 1});
  // Pointers and parameters of other sizes are not values.
  CHECK(paramValues(L, kernelWithParams()).count("arg0") == 1);
  KernelInfo Odd;
  Odd.Params = {{0, 3}, {8, 4}};
  CHECK(paramValues(L, Odd).count("arg0") == 0);
  CHECK(paramValues(L, Odd).at("arg1") == 500);
}

TEST_CASE("bad grid rules say where and what") {
  CHECK(contains(applyError("x=ceil(nn / block_x)", {128, 1, 1}),
                 "column 6: unknown name 'nn'"));
  CHECK(contains(applyError("x=arg1 / block_x", {128, 1, 1}),
                 "gives 3.90625; expected an integer from 1 to 2147483647"));
  CHECK(contains(applyError("x=arg1 / (block_y - 1)", {128, 1, 1}),
                 "division by zero"));
  CHECK(contains(applyError("x=ceil(arg1", {128, 1, 1}), "expected ')'"));
  CHECK(contains(applyError("w=4", {128, 1, 1}), "expected keep-threads"));
  CHECK(contains(applyError("x=4;x=5", {128, 1, 1}), "assigned twice"));
  CHECK(contains(applyError("y=70000", {128, 1, 1}), "from 1 to 65535"));
}

TEST_CASE("dimensions parse with defaults and reject zero") {
  CHECK(*parseDim3("128", "--block") == Dim3{128, 1, 1});
  CHECK(*parseDim3("16,8", "--block") == Dim3{16, 8, 1});
  CHECK_FALSE(parseDim3("16,0", "--block"));
  CHECK_FALSE(parseDim3("1,2,3,4", "--block"));
  CHECK_FALSE(parseDim3("x", "--block"));
}

TEST_CASE("device spans are aligned to the granularity and merged") {
  const uint64_t G = 2 << 20;
  auto S = planSpans({{0x7f0000200100, 256, "b"},
                      {0x7f0000200000, 256, "a"},
                      {0x7f0000400000, 4 << 20, "c"}, // touches a's granule
                      {0x7f0001000000, 1, "d"},
                      {0x7f0002000000, 0, "empty"}},
                     G);
  REQUIRE(S.size() == 2);
  CHECK(S[0].Base == 0x7f0000200000);
  CHECK(S[0].Size == 6 << 20);
  CHECK(S[0].Labels == std::vector<std::string>{"a", "b", "c"});
  CHECK(S[1].Base == 0x7f0001000000);
  CHECK(S[1].Size == G);
  CHECK(planSpans({}, G).empty());
}

TEST_CASE("a result's CUDA fields survive the server protocol") {
  CandidateResult R;
  R.Verified = false;
  R.Failure = FailureKind::Crashed;
  R.Message = "crashed: the kernel: CUDA_ERROR_ILLEGAL_ADDRESS";
  R.DeviceLost = true;
  R.LoadMs = 1.5;
  R.RestoreMs = 0.25;
  R.Registers = 40;
  auto W = encode(R);
  auto Back = decodeResult(W.data());
  REQUIRE(Back);
  CHECK(Back->DeviceLost);
  CHECK(Back->LoadMs == 1.5);
  CHECK(Back->RestoreMs == 0.25);
  CHECK(*Back->Registers == 40);
  CHECK(Back->Failure == FailureKind::Crashed);
}
