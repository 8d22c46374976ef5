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

TEST_CASE("a coarsened kernel's rule divides x's threads by its factor") {
  LaunchInfo L = launchWith(500, 7); // 32x24 blocks of 16x16
  CHECK(apply(coarsenedGridRule(2), {16, 16, 1}, L) == Dim3{16, 24, 1});
  CHECK(apply(coarsenedGridRule(4), {16, 16, 1}, L) == Dim3{8, 24, 1});
  CHECK(apply(coarsenedGridRule(4), {24, 8, 1}, L) == Dim3{6, 48, 1});
  CHECK(apply(coarsenedGridRule(1), {32, 8, 1}, L) ==
        apply("keep-threads", {32, 8, 1}, L));
  // Only where the grid is not set otherwise and the kernel's rule keeps
  // threads.
  CHECK(gridRuleFor("", 2, false) == coarsenedGridRule(2));
  CHECK(gridRuleFor("keep-threads", 4, false) == coarsenedGridRule(4));
  CHECK(gridRuleFor("", 2, true).empty());
  CHECK(gridRuleFor("x=ceil(arg1 / block_x)", 2, false) ==
        "x=ceil(arg1 / block_x)");
  CHECK(gridRuleFor("keep-grid", 0, false) == "keep-grid");
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
  // Once an uncaught std::out_of_range from std::stod that killed r3 (the
  // fuzz smoke found it).
  std::string Huge =
      applyError("x=max(1, " + std::string(400, '1') + ")", {128, 1, 1});
  CAPTURE(Huge);
  CHECK(contains(Huge, "column 8: number out of range, got '1111"));
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

namespace {
std::vector<uint8_t> words(std::initializer_list<uint64_t> Ws) {
  std::vector<uint8_t> B(Ws.size() * 8);
  size_t I = 0;
  for (uint64_t W : Ws)
    std::memcpy(B.data() + 8 * I++, &W, 8);
  return B;
}

uint64_t word(const std::vector<uint8_t> &B, size_t I) {
  uint64_t W;
  std::memcpy(&W, B.data() + 8 * I, 8);
  return W;
}

/// Two spans: the first moved by +0x10000000, the second left in place.
Relocation twoSpans() {
  Relocation R;
  R.addSpan(0x7f0000200000, 0x7f0010200000, 0x400000);
  R.addSpan(0x7f0001000000, 0x7f0001000000, 0x200000);
  R.setRegions({{0x7f0000200100, 0x7f0000200200},
                {0x7f0000200000, 0x7f0000200100}, // touches: merged
                {0x7f0000400000, 0x7f0000500000},
                {0x7f0001000000, 0x7f0001000800}});
  return R;
}
} // namespace

TEST_CASE("relocation moves pointers into recorded regions with their span") {
  Relocation R = twoSpans();
  CHECK(R.moved() == 1);
  CHECK(R.translate(0x7f0000200040) == 0x7f0010200040);
  CHECK(R.translate(0x7f0001000040) == 0x7f0001000040); // not moved
  CHECK(R.translate(0x12345) == 0x12345);               // outside every span
  auto B = words({0x7f0000200000,                       // a region's start
                  0x7f00002001f8, // inside the merged region
                  0x7f0000500000, // one past a region's end
                  0x7f0000300000, // in the span, but in no region: data
                  0x7f0001000010, // in a span that did not move
                  42, 0x3f800000bf800000});
  CHECK(R.relocate(B, 0x7f0000400000) == 3);
  CHECK(word(B, 0) == 0x7f0010200000);
  CHECK(word(B, 1) == 0x7f00102001f8);
  CHECK(word(B, 2) == 0x7f0010500000);
  CHECK(word(B, 3) == 0x7f0000300000);
  CHECK(word(B, 4) == 0x7f0001000010);
  CHECK(word(B, 5) == 42);
  CHECK(word(B, 6) == 0x3f800000bf800000);
}

TEST_CASE("relocation reads only 8-byte aligned words, by recorded address") {
  Relocation R = twoSpans();
  // Recorded at an address 4 bytes past an 8-byte boundary: the pointer at
  // offset 4 is aligned, the one at offset 0 is not.
  std::vector<uint8_t> B(16);
  uint64_t P = 0x7f0000200010;
  std::memcpy(B.data() + 4, &P, 8);
  CHECK(R.relocate(B, 0x7f0000400004) == 1);
  uint64_t Got;
  std::memcpy(&Got, B.data() + 4, 8);
  CHECK(Got == 0x7f0010200010);
  // Nothing moved: nothing is rewritten.
  Relocation Still;
  Still.addSpan(0x7f0000200000, 0x7f0000200000, 0x200000);
  Still.setRegions({{0x7f0000200000, 0x7f0000300000}});
  auto C = words({0x7f0000200010});
  CHECK(Still.relocate(C, 0) == 0);
  CHECK(word(C, 0) == 0x7f0000200010);
}
