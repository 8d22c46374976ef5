// Tuning an application: Amdahl over kernel shares, the profile model and its
// selection by cover, and the scan that finds a kernel's definition.
#include "Catch.h"

#include "app/KernelSource.h"
#include "app/ProfileModel.h"
#include "report/Amdahl.h"

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace r3;
using namespace r3::app;

namespace {
wire::KernelStatsMsg kernel(const std::string &Name, uint64_t Ns,
                            const std::string &Untunable = "") {
  wire::KernelStatsMsg K;
  K.Name = Name;
  K.Launches = K.TimedLaunches = 10;
  K.TotalNs = Ns;
  K.Untunable = Untunable;
  return K;
}

ProfileModel model(std::vector<wire::KernelStatsMsg> Kernels, double Wall) {
  AppProfile P;
  P.Kernels = std::move(Kernels);
  P.WallSeconds = Wall;
  ProfileRequest R;
  R.Argv = {"./app"};
  return profileModel(P, R, 1.5);
}
} // namespace

TEST_CASE("Amdahl over kernel shares", "[app]") {
  CHECK(report::endToEndSpeedup({{0.5, 2}}) == Approx(1 / 0.75));
  CHECK(report::endToEndSpeedup({{0.2, 2}, {0.3, 1.5}}) ==
        Approx(1 / (0.5 + 0.1 + 0.2)));
  CHECK(report::endToEndCeiling({0.25, 0.25}) == Approx(2));
  CHECK(std::isinf(report::endToEndCeiling({0.6, 0.4})));
  // Shares that add up to more than the run (overlapping streams) are
  // scaled to the whole run, not allowed to make time negative.
  CHECK(report::endToEndSpeedup({{0.8, 2}, {0.8, 2}}) == Approx(2));
  CHECK(report::endToEndSpeedup({}) == 1);
}

TEST_CASE("the profile model orders kernels and states the ceilings", "[app]") {
  ProfileModel M =
      model({kernel("light", 1'000'000), kernel("heavy", 7'000'000),
             kernel("graphy", 2'000'000, "in a graph")},
            0.02);
  REQUIRE(M.Kernels.size() == 3);
  CHECK(M.Kernels[0].Name == "heavy");
  CHECK(M.Kernels[1].Name == "graphy");
  CHECK(M.Kernels[0].ShareOfKernels == Approx(0.7));
  CHECK(M.Kernels[0].ShareOfRun == Approx(0.35));
  CHECK(M.KernelSeconds == Approx(0.01));
  CHECK(M.Tunable == 2);
  CHECK(M.TunableShare == Approx(0.4)); // the graph's kernel cannot be tuned
  CHECK(M.CeilingFree == Approx(1 / 0.6));
  CHECK(M.CeilingAtSpeedup == Approx(1 / (0.6 + 0.4 / 1.5)));
  CHECK(M.Kernels[0].MeanUs == Approx(700));
}

TEST_CASE("selection by cover takes the heaviest tunable kernels", "[app]") {
  ProfileModel M = model({kernel("a", 50), kernel("b", 30), kernel("c", 15),
                          kernel("d", 5), kernel("g", 40, "graph")},
                         1);
  // Of 140 ns: a 35.7%, g 28.6% (untunable), b 21.4%, c 10.7%, d 3.6%.
  Selection S = selectByCover(M, 0.5);
  REQUIRE(S.Chosen.size() == 2);
  CHECK(S.Chosen[0].Name == "a");
  CHECK(S.Chosen[1].Name == "b");
  CHECK(S.Covered == Approx(80.0 / 140));
  Selection All = selectByCover(M, 1.0);
  CHECK(All.Chosen.size() == 4);
  CHECK(All.Left.size() == 1);
  CHECK(All.Left[0].Name == "g");
  CHECK(selectByCover(M, 0.3).Chosen.size() == 1);
}

TEST_CASE("a kernel's base name drops scope, template and parameters",
          "[app]") {
  CHECK(baseName("heavy") == "heavy");
  CHECK(baseName("jacobi2d(int, int, float const*, float*)") == "jacobi2d");
  CHECK(baseName("ns::inner::react<float, 4>(float*, int)") == "react");
  CHECK(baseName("void k<(anonymous namespace)::T>(T*)") == "k");
}

TEST_CASE("definitions are found outside comments and strings", "[app]") {
  std::string Cuda = R"(// __global__ void k(float *x) { old }
#include "k.h"
__device__ float k_helper(float v) { return v; }
void launch() { k<<<1, 1>>>(nullptr); const char *s = "k(x) {"; }
template <int N>
__global__ void
__launch_bounds__(256)
k(float *x, int n)
{
  x[0] = k_helper(x[0]);
}
__global__ void k(double *x);
)";
  CHECK(definitionLines(Cuda, "k", true) == std::vector<size_t>{8});
  CHECK(definitionLines(Cuda, "k_helper", true).empty());
  CHECK(definitionLines(Cuda, "k_helper", false) == std::vector<size_t>{3});
  CHECK(definitionLines("void heavy(int n) /* { */ {}", "heavy", false) ==
        std::vector<size_t>{1});
  CHECK(definitionLines("int heavy_too(int n) {}", "heavy", false).empty());
}

TEST_CASE("a kernel defined in two files is an error naming both", "[app]") {
  namespace fs = std::filesystem;
  fs::path Dir = fs::temp_directory_path() / "r3-app-test-tree";
  fs::remove_all(Dir);
  fs::create_directories(Dir / "src" / ".git");
  std::ofstream(Dir / "src" / "a.c") << "void k(int n) {}\n";
  std::ofstream(Dir / "src" / ".git" / "x.c") << "void k(int n) {}\n";
  std::ofstream(Dir / "b.txt") << "void k(int n) {}\n";
  auto T = treeUnder(Dir.string());
  REQUIRE(T);
  CHECK(T->Files.size() == 1); // hidden folders and other files are skipped
  auto D = findDefinition(*T, "k", false);
  REQUIRE(D);
  REQUIRE(D->has_value());
  CHECK((*D)->Line == 1);
  std::ofstream(Dir / "src" / "b.cpp") << "\n\nvoid k(int n)\n{\n}\n";
  auto Two = findDefinition(*treeUnder(Dir.string()), "k", false);
  REQUIRE_FALSE(Two);
  CHECK(Two.error().message().find("a.c:1 and ") != std::string::npos);
  CHECK(Two.error().message().find("b.cpp:3") != std::string::npos);
  auto None = findDefinition(*treeUnder(Dir.string()), "other", false);
  REQUIRE(None);
  CHECK_FALSE(None->has_value());
  CHECK_FALSE(treeUnder((Dir / "missing").string()));
  fs::remove_all(Dir);
}
