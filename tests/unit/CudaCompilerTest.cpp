// The CUDA variant compiler without a GPU: a kernel of the CLI tests' input
// compiled to PTX and a cubin with a resource report; launch bounds, the
// register limit and specialization on the IR; the stage cache; and the errors
// a candidate's compile_error carries.
#include "Catch.h"

#include "compile/cuda/CompileCache.h"
#include "compile/cuda/CudaCompiler.h"
#include "compile/cuda/Stages.h"
#include "support/FileUtil.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace r3;
namespace fs = std::filesystem;

namespace {

CudaCompileOptions scaleOptions() {
  // The CUDA 13 header shim lives in share/; the test binary is not where r3
  // is, so say where.
  ::setenv("R3_SHARE_DIR", R3_TEST_SHARE, 0);
  CudaCompileOptions O;
  O.SourcePath = std::string(R3_TEST_CLI_INPUTS) + "/cuda-scale.cu";
  O.Kernel = "scale(float*, float const*, float, int, int)";
  return O;
}

Error writeFileForTest(const std::string &Path, const std::string &Text) {
  return writeFileAtomically(Path, Text);
}

std::string freshDir(const char *Name) {
  fs::path Dir = fs::temp_directory_path() /
                 (std::string(Name) + "-" + std::to_string(::getpid()));
  fs::remove_all(Dir);
  return Dir.string();
}

/// The recorded parameter buffer of scale(Out, In, 2.5f, 1000, 2).
Specialization scaleLaunch() {
  Specialization S;
  S.Layout = {{0, 8}, {8, 8}, {16, 4}, {20, 4}, {24, 4}};
  S.Params.assign(28, 0);
  float Factor = 2.5f;
  int32_t N = 1000, Repeat = 2;
  std::memcpy(&S.Params[16], &Factor, 4);
  std::memcpy(&S.Params[20], &N, 4);
  std::memcpy(&S.Params[24], &Repeat, 4);
  S.Grid = {8, 1, 1};
  S.Block = {128, 1, 1};
  return S;
}

} // namespace

TEST_CASE("a kernel compiles to PTX and a cubin with a report", "[cuda]") {
  auto C = compileCudaKernel(scaleOptions());
  REQUIRE(C);
  CHECK(C->Report.Kernel == "_Z5scalePfPKffii");
  CHECK(C->Report.Pipeline == "default<O3>");
  CHECK(C->Ptx.find(".entry _Z5scalePfPKffii(") != std::string::npos);
  REQUIRE(C->Cubin.size() > 4);
  CHECK(std::memcmp(C->Cubin.data(),
                    "\x7f"
                    "ELF",
                    4) == 0);
  CHECK(C->Report.Registers > 0);
  CHECK(C->Report.Spills == 0);
  CHECK(C->Report.SharedBytes == 0);
  CHECK(C->Report.PtxBytes == C->Ptx.size());
  CHECK(C->Ir.find("define") != std::string::npos);
  CHECK(C->Report.ParamNames ==
        std::vector<std::string>{"Out", "In", "Factor", "N", "Repeat"});
}

TEST_CASE("bounds and the register limit reach the PTX", "[cuda]") {
  CudaCompileOptions O = scaleOptions();
  O.Bounds = LaunchBoundsSpec{256, 2};
  O.MaxRegisters = 32;
  auto C = compileCudaKernel(O);
  REQUIRE(C);
  CHECK(C->Ptx.find(".maxntid 256, 1, 1") != std::string::npos);
  CHECK(C->Ptx.find(".minnctapersm 2") != std::string::npos);
  CHECK(C->Ptx.find(".maxnreg 32") != std::string::npos);
  CHECK(C->Report.Registers <= 32);
}

TEST_CASE("specialization folds arguments and dimensions", "[cuda]") {
  CudaCompileOptions O = scaleOptions();
  Specialization S = scaleLaunch();
  S.Args = S.Dims = true;
  O.Specialize = S;
  auto C = compileCudaKernel(O);
  REQUIRE(C);
  CHECK(C->Ir.find("2.500000e+00") != std::string::npos);
  CHECK(C->Ir.find("llvm.nvvm.read.ptx.sreg.ntid") == std::string::npos);
  CHECK(C->Ir.find("llvm.nvvm.read.ptx.sreg.nctaid") == std::string::npos);
  S.Layout.pop_back();
  O.Specialize = S;
  auto Bad = compileCudaKernel(O);
  REQUIRE(!Bad);
  CHECK(Bad.error().message() ==
        "kernel '_Z5scalePfPKffii' has 5 parameters in the IR, the capture's "
        "parameter layout has 4");
}

TEST_CASE("the cache serves a repeated compile", "[cuda]") {
  CudaCompileOptions O = scaleOptions();
  O.CacheDir = freshDir("r3-cuda-cache-test");
  auto First = compileCudaKernel(O);
  REQUIRE(First);
  CHECK(!First->Report.FrontendCached);
  auto Second = compileCudaKernel(O);
  REQUIRE(Second);
  CHECK(Second->Report.FrontendCached);
  CHECK(Second->Report.PtxCached);
  CHECK(Second->Report.CubinCached);
  CHECK(Second->Ptx == First->Ptx);
  CHECK(Second->Cubin == First->Cubin);
  CHECK(Second->Report.Registers == First->Report.Registers);
  O.CodegenOpt = 0;
  auto Level0 = compileCudaKernel(O);
  REQUIRE(Level0);
  CHECK(Level0->Report.FrontendCached);
  CHECK(!Level0->Report.CubinCached);
  fs::remove_all(O.CacheDir);
}

TEST_CASE("a cache manifest notices an edited file", "[cuda]") {
  std::string Dir = freshDir("r3-cuda-manifest-test");
  fs::create_directories(Dir);
  std::string File = Dir + "/h.h";
  REQUIRE(!writeFileForTest(File, "one"));
  auto M = CompileCache::manifestOf({File});
  REQUIRE(M);
  CHECK(CompileCache::manifestHolds(*M));
  REQUIRE(!writeFileForTest(File, "two"));
  CHECK(!CompileCache::manifestHolds(*M));
  fs::remove_all(Dir);
}

TEST_CASE("compile errors say what went wrong", "[cuda]") {
  CudaCompileOptions O = scaleOptions();
  O.Pipeline = "function(bogus)";
  auto Bad = compileCudaKernel(O);
  REQUIRE(!Bad);
  CHECK(Bad.error().message() ==
        "pipeline 'function(bogus)': unknown function pass 'bogus'");
  O = scaleOptions();
  O.Kernel = "missing";
  Bad = compileCudaKernel(O);
  REQUIRE(!Bad);
  CHECK(Bad.error().message().find(": no kernel 'missing' in the source") !=
        std::string::npos);
  O = scaleOptions();
  O.Toolchain = CudaToolchain::Nvrtc;
  O.Pipeline = "default<O2>";
  Bad = compileCudaKernel(O);
  REQUIRE(!Bad);
  CHECK(Bad.error().message().find("the nvrtc toolchain runs no LLVM "
                                   "pipeline") != std::string::npos);
}

TEST_CASE("nvrtc compiles and reports", "[cuda]") {
  CudaCompileOptions O = scaleOptions();
  O.Toolchain = CudaToolchain::Nvrtc;
  O.Kernel = "shift";
  O.Flags = {"--use_fast_math"};
  auto C = compileCudaKernel(O);
  REQUIRE(C);
  CHECK(C->Report.Kernel == "_Z5shiftPii");
  CHECK(C->Report.Registers > 0);
  CHECK(!C->Cubin.empty());
}

TEST_CASE("resources are read from the cubin when the log lacks them",
          "[cuda]") {
  auto C = compileCudaKernel(scaleOptions());
  REQUIRE(C);
  CudaCompileReport FromElf;
  FromElf.Kernel = C->Report.Kernel;
  cuda::readResources("", C->Cubin, FromElf);
  CHECK(FromElf.Registers == C->Report.Registers);
  CHECK(FromElf.SharedBytes == C->Report.SharedBytes);
  CHECK(FromElf.LocalBytes == C->Report.LocalBytes);
}
