// Kernel selection by regex over mangled and demangled names, and launch
// ranges.
#include "Catch.h"

#include "record/Selection.h"
#include "support/Demangle.h"

using namespace r3;

namespace {
LaunchRange range(std::optional<std::string> Launch,
                  std::optional<std::string> Launches = std::nullopt,
                  std::optional<std::string> Skip = std::nullopt,
                  std::optional<std::string> Max = std::nullopt) {
  auto R = parseLaunchRange(Launch, Launches, Skip, Max);
  REQUIRE(R);
  return *R;
}

std::vector<uint64_t> recorded(KernelSelector &S, const std::string &K, int N) {
  std::vector<uint64_t> Out;
  for (int I = 0; I < N; ++I)
    if (S.countLaunch(K))
      Out.push_back(I);
  return Out;
}

const std::string Stencil =
    "_Z7stencilPKfPfii"; // stencil(float const*, float*, int, int)
} // namespace

TEST_CASE("kernels match by mangled or demangled name", "[record]") {
  CHECK(demangle(Stencil) == "stencil(float const*, float*, int, int)");
  CHECK(demangle("plain_c_kernel").empty());
  auto S = KernelSelector::create({"^stencil\\(", "spmv"}, range(std::nullopt));
  REQUIRE(S);
  CHECK(S->selects(Stencil));    // demangled name
  CHECK(S->selects("spmv_csr")); // extern "C" name
  CHECK_FALSE(S->selects("_Z4axpyfPfS_"));
  auto Mangled = KernelSelector::create({"^_Z7stencil"}, range(std::nullopt));
  REQUIRE(Mangled);
  CHECK(Mangled->selects(Stencil));
  // matches() answers the same without remembering the kernel.
  const KernelSelector &C = *S;
  CHECK(C.matches(Stencil));
  CHECK(C.matches("spmv_csr"));
  CHECK_FALSE(C.matches("_Z4axpyfPfS_"));
  CHECK(S->launchesSeen("spmv_csr") == 0);
}

TEST_CASE("launch ranges pick ordinals per kernel", "[record]") {
  auto First = KernelSelector::create({"stencil"}, range(std::nullopt));
  CHECK(recorded(*First, Stencil, 5) == std::vector<uint64_t>{0});
  auto Nth = KernelSelector::create({"stencil"}, range("3"));
  CHECK(recorded(*Nth, Stencil, 5) == std::vector<uint64_t>{3});
  auto Span = KernelSelector::create({"stencil"}, range(std::nullopt, "1-3"));
  CHECK(recorded(*Span, Stencil, 6) == std::vector<uint64_t>{1, 2, 3});
  auto Capped = KernelSelector::create(
      {"stencil"}, range(std::nullopt, "1-5", std::nullopt, "2"));
  CHECK(recorded(*Capped, Stencil, 6) == std::vector<uint64_t>{1, 2});
  auto Skipped = KernelSelector::create(
      {"stencil"}, range(std::nullopt, std::nullopt, "2", "2"));
  CHECK(recorded(*Skipped, Stencil, 6) == std::vector<uint64_t>{2, 3});
  CHECK(Skipped->launchesSeen(Stencil) == 6);
  CHECK(Skipped->launchesRecorded(Stencil) == 2);
  // Unselected kernels are counted but never recorded.
  CHECK(recorded(*Skipped, "_Z4axpyfPfS_", 3).empty());
  CHECK(Skipped->launchesSeen("_Z4axpyfPfS_") == 3);
}

TEST_CASE("bad selections are errors naming the option", "[record]") {
  auto BadRegex = KernelSelector::create({"sten(cil"}, LaunchRange{});
  REQUIRE_FALSE(BadRegex);
  CHECK(BadRegex.error().message().rfind(
            "--kernel 'sten(cil': not a valid regular expression", 0) == 0);
  auto Both = parseLaunchRange("1", "1-2", std::nullopt, std::nullopt);
  REQUIRE_FALSE(Both);
  CHECK(Both.error().message() == "--launch and --launches exclude each other");
  auto Empty =
      parseLaunchRange(std::nullopt, "5-2", std::nullopt, std::nullopt);
  REQUIRE_FALSE(Empty);
  CHECK(Empty.error().message() ==
        "--launches 5-2: the range is empty (B < A)");
  auto Word = parseLaunchRange("two", std::nullopt, std::nullopt, std::nullopt);
  REQUIRE_FALSE(Word);
  CHECK(Word.error().message() ==
        "--launch expects a non-negative integer, got 'two'");
  CHECK_FALSE(parseLaunchRange(std::nullopt, "3", std::nullopt, std::nullopt));
  CHECK_FALSE(parseLaunchRange(std::nullopt, std::nullopt, std::nullopt, "0"));
}
