// The r3 run ↔ application contract (use/UsePlan.h): the plan and the
// per-process reports round-trip every field; a damaged file is an error
// naming the file, the line and what is wrong; reports are written whole.
#include "Catch.h"

#include "use/UsePlan.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace r3;
using namespace r3::use;

namespace {
KernelPlan sampleKernel() {
  KernelPlan K;
  K.Name = "_Z8jacobi2dPKfPfii";
  K.ModuleSha256 = std::string(64, 'a');
  K.Artifact = "/tmp/a folder/jacobi2d.cubin";
  K.Pipeline = "function(instcombine,gvn), default<O3>";
  K.CodegenOpt = 3;
  K.RecordedOpt = 1;
  K.Block = {128, 2, 1};
  K.GridRule = "x=ceil(arg3 / block_x);y=ceil(n / block_y)";
  K.GridPerSm = 4;
  K.DynamicShared = 65536;
  K.CachePreference = "l1";
  K.Tolerance = 2;
  K.ToleranceValue = 1.5e-7;
  K.ElementType = 1;
  K.Speedup = 1.2345678901234567;
  K.SpeedupLo = 1.1;
  K.SpeedupHi = 1.3;
  return K;
}

std::string planError(const std::string &Text) {
  auto P = decodePlan(Text, "plan.txt");
  REQUIRE(!P);
  return P.error().message();
}
} // namespace

TEST_CASE("a plan round-trips every field", "[useplan]") {
  Plan P;
  P.VerifyLaunches = 3;
  P.TimeKernels = true;
  P.KeepOriginal = false;
  P.Kernels.push_back(sampleKernel());
  KernelPlan Second;
  Second.Name = "spmv";
  Second.ModuleSha256 = std::string(64, 'b');
  P.Kernels.push_back(Second);
  auto Back = decodePlan(encodePlan(P), "plan");
  REQUIRE(Back);
  CHECK(Back->VerifyLaunches == 3);
  CHECK(Back->TimeKernels);
  CHECK(!Back->KeepOriginal);
  REQUIRE(Back->Kernels.size() == 2);
  const KernelPlan &K = Back->Kernels[0], &W = P.Kernels[0];
  CHECK(K.Name == W.Name);
  CHECK(K.ModuleSha256 == W.ModuleSha256);
  CHECK(K.Artifact == W.Artifact);
  CHECK(K.Pipeline == W.Pipeline);
  CHECK(K.CodegenOpt == 3);
  CHECK(K.RecordedOpt == 1);
  CHECK(K.Block == Dim3{128, 2, 1});
  CHECK(K.GridRule == W.GridRule);
  CHECK(K.GridPerSm == 4);
  CHECK(K.GridX == 0);
  CHECK(K.DynamicShared == 65536);
  CHECK(K.CachePreference == "l1");
  CHECK(K.Tolerance == 2);
  CHECK(K.ToleranceValue == W.ToleranceValue);
  CHECK(K.ElementType == 1);
  CHECK(K.Speedup == W.Speedup); // 17 digits: exact
  CHECK(Back->Kernels[1].Artifact.empty());
  CHECK(Back->Kernels[1].DynamicShared == -1);
  CHECK(Back->Kernels[1].GridPerSm == 0);
  Second.GridX = 1056;
  P.Kernels = {Second};
  auto GridX = decodePlan(encodePlan(P), "plan");
  REQUIRE(GridX);
  CHECK(GridX->Kernels[0].GridX == 1056);
  CHECK(Back->find("spmv") == &Back->Kernels[1]);
  CHECK(Back->find("nothing") == nullptr);
}

TEST_CASE("a value with a newline cannot split a plan's line", "[useplan]") {
  Plan P;
  KernelPlan K = sampleKernel();
  K.Pipeline = "default<O2>\nkernel injected";
  P.Kernels.push_back(K);
  auto Back = decodePlan(encodePlan(P), "plan");
  REQUIRE(Back);
  REQUIRE(Back->Kernels.size() == 1);
  CHECK(Back->Kernels[0].Pipeline == "default<O2> kernel injected");
}

TEST_CASE("a damaged plan is an error with its place", "[useplan]") {
  CHECK(planError("") ==
        "plan.txt:0: not an r3 run plan (expected 'r3-use-plan 1' first)");
  CHECK(planError("r3-use-plan 2\n").find("not an r3 run plan") !=
        std::string::npos);
  std::string Head = "r3-use-plan 1\n";
  CHECK(planError(Head + "verify-launches many\n") ==
        "plan.txt:2: 'verify-launches' needs a non-negative integer, got "
        "'many'");
  CHECK(planError(Head + "kernel k\nmodule m\nblock 1 2\nend\n") ==
        "plan.txt:4: 'block' needs 3 numbers, got '1 2'");
  CHECK(planError(Head + "kernel k\nmodule m\n") ==
        "plan.txt:3: kernel 'k' has no 'end'");
  CHECK(planError(Head + "kernel k\nend\n") ==
        "plan.txt:3: kernel 'k' names no module");
  CHECK(planError(Head + "kernel k\nmodule m\nend\nkernel k\n") ==
        "plan.txt:5: kernel 'k' is planned twice");
  CHECK(planError(Head + "kernel k\ncolour red\n") ==
        "plan.txt:3: unknown key 'colour' in a kernel");
  CHECK(planError(Head + "end\n") == "plan.txt:2: 'end' outside a kernel");
  CHECK(planError(Head + "kernel k\nmodule m\ngrid-per-sm -2\n") ==
        "plan.txt:4: 'grid-per-sm' must be a count of blocks");
  CHECK(planError(Head + "time-kernels 2\n") ==
        "plan.txt:2: 'time-kernels' is 0 or 1, got '2'");
}

TEST_CASE("a report round-trips and is written whole", "[useplan]") {
  ProcessReport R;
  R.Pid = 4242;
  R.Kernels.push_back({"a", Outcome::Replaced, 10, 2, 8, 123456, "",
                       Dim3{528, 1, 1}, Dim3{256, 1, 1}});
  R.Kernels.push_back(
      {"b", Outcome::VerifyFailed, 1, 0, 0, 0, "launch 0: 3 mismatches"});
  R.Kernels.push_back({"c", Outcome::Refused, 0, 0, 0, 0, "changed\nkernel"});
  char Dir[] = "/tmp/r3-useplan-XXXXXX";
  REQUIRE(::mkdtemp(Dir));
  REQUIRE(!writeReportFile(Dir, R.Pid, encodeReport(R)));
  std::string Path = std::string(Dir) + "/report.4242";
  std::ifstream In(Path);
  std::stringstream S;
  S << In.rdbuf();
  auto Back = decodeReport(S.str(), Path);
  REQUIRE(Back);
  CHECK(Back->Pid == 4242);
  REQUIRE(Back->Kernels.size() == 3);
  CHECK(Back->Kernels[0].Launches == 10);
  CHECK(Back->Kernels[0].Verified == 2);
  CHECK(Back->Kernels[0].Timed == 8);
  CHECK(Back->Kernels[0].KernelNs == 123456);
  CHECK(Back->Kernels[0].Grid == Dim3{528, 1, 1});
  CHECK(Back->Kernels[0].Block == Dim3{256, 1, 1});
  CHECK(Back->Kernels[1].Grid == Dim3{}); // none launched: no shape
  CHECK(Back->Kernels[1].What == Outcome::VerifyFailed);
  CHECK(Back->Kernels[1].Message == "launch 0: 3 mismatches");
  CHECK(Back->Kernels[2].What == Outcome::Refused);
  CHECK(Back->Kernels[2].Message == "changed kernel");
  // No partial file is left behind.
  CHECK(::access((Path + ".partial").c_str(), F_OK) != 0);
  std::remove(Path.c_str());
  ::rmdir(Dir);
  auto Bad =
      decodeReport("r3-use-report 1\nkernel a\noutcome lost\nend\n", "rep");
  REQUIRE(!Bad);
  CHECK(Bad.error().message() == "rep:3: unknown outcome 'lost'");
  auto BadGrid =
      decodeReport("r3-use-report 1\nkernel a\ngrid 4 0 1\nend\n", "rep");
  REQUIRE(!BadGrid);
  CHECK(BadGrid.error().message() ==
        "rep:3: 'grid' takes three positive numbers, got '4 0 1'");
  CHECK(writeReportFile("/nonexistent-dir", 1, "x")
            .message()
            .find("/nonexistent-dir/report.1.partial") != std::string::npos);
}
