// The CUDA variant compiler without a GPU: a kernel of the CLI tests' input
// compiled to PTX and a cubin with a resource report; launch bounds, the
// register limit and specialization on the IR; the stage cache; and the errors
// a candidate's compile_error carries; the compile server's frame checks.
#include "Catch.h"

#include "compile/cuda/CompileCache.h"
#include "compile/cuda/CompileServer.h"
#include "compile/cuda/CudaCompiler.h"
#include "compile/cuda/Stages.h"
#include "support/FileUtil.h"
#include "support/Frame.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/mman.h>
#include <sys/wait.h>
#include <tuple>
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
  O.Settings.Bounds = LaunchBoundsSpec{256, 2};
  O.Settings.MaxRegisters = 32;
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
  O.Settings.SpecializeArgs = O.Settings.SpecializeDims = true;
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
  O.Settings.CodegenOpt = 0;
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
  O.Settings.Pipeline = "function(bogus)";
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
  O.Settings.Toolchain = CudaToolchain::Nvrtc;
  O.Settings.Pipeline = "default<O2>";
  Bad = compileCudaKernel(O);
  REQUIRE(!Bad);
  CHECK(Bad.error().message().find("the nvrtc toolchain runs no LLVM "
                                   "pipeline") != std::string::npos);
}

TEST_CASE("nvrtc compiles and reports", "[cuda]") {
  CudaCompileOptions O = scaleOptions();
  O.Settings.Toolchain = CudaToolchain::Nvrtc;
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

namespace {
/// What runCompileServer said of the request stream In, run in a child
/// (it ignores SIGINT and dies with its parent): its error message, and how
/// much its peak resident memory grew, in MiB.
std::pair<std::string, long> compileServerOn(const std::vector<uint8_t> &In) {
  int Fd = ::memfd_create("r3-test-requests", 0);
  REQUIRE(Fd >= 0);
  REQUIRE(::write(Fd, In.data(), In.size()) == ssize_t(In.size()));
  ::lseek(Fd, 0, SEEK_SET);
  int Report[2], Out[2];
  REQUIRE(::pipe(Report) == 0);
  REQUIRE(::pipe(Out) == 0);
  pid_t Pid = ::fork();
  REQUIRE(Pid >= 0);
  if (Pid == 0) {
    auto peakKiB = [] {
      std::ifstream S("/proc/self/status");
      std::string Line;
      while (std::getline(S, Line))
        if (Line.starts_with("VmHWM:"))
          return std::stol(Line.substr(6));
      return 0L;
    };
    long Before = peakKiB();
    Error E = runCompileServer(Fd, Out[1]);
    std::string Text = std::to_string((peakKiB() - Before) / 1024) + " " +
                       (E ? E.message() : "");
    (void)!::write(Report[1], Text.data(), Text.size());
    ::_exit(0);
  }
  ::close(Report[1]);
  std::string Text;
  char Buf[512];
  for (ssize_t N; (N = ::read(Report[0], Buf, sizeof Buf)) > 0;)
    Text.append(Buf, static_cast<size_t>(N));
  int Status = 0;
  ::waitpid(Pid, &Status, 0);
  for (int F : {Fd, Report[0], Out[0], Out[1]})
    ::close(F);
  size_t Space = Text.find(' ');
  REQUIRE(Space != std::string::npos);
  return {Text.substr(Space + 1), std::stol(Text.substr(0, Space))};
}

std::vector<uint8_t> frameHeader(uint32_t Type, uint32_t Meta, uint64_t Bulk) {
  auto H = wire::encodeHeader({Type, Meta, Bulk});
  return {H.begin(), H.end()};
}
} // namespace

TEST_CASE("fuzz: the compile server checks a request's claimed lengths "
          "before it reads",
          "[cuda][fuzz]") {
  // The compile server sized its buffers by a request header's lengths (a
  // 4 GiB meta claim allocated and zeroed 4 GiB) before reading; it now
  // reads with the shared frame reader (support/Frame.h), as the replay
  // server and worker protocols do.
  std::vector<uint8_t> Huge = frameHeader(201, 0xF7000000u, 8);
  Huge.insert(Huge.end(), {1, 2, 3});
  auto [Message, Growth] = compileServerOn(Huge);
  CHECK(Message == "compile server: a frame of type 201 claims 4143972352 "
                   "meta bytes, more than any of its frames carries "
                   "(16777216)");
  CHECK(Growth < 200);
  // A short request: lengths within the limits, fewer bytes than claimed.
  std::vector<uint8_t> Short = frameHeader(201, 4096, 8);
  Short.insert(Short.end(), {1, 2, 3});
  std::tie(Message, Growth) = compileServerOn(Short);
  CHECK(Message == "compile server: the stream ended in the middle of a "
                   "frame (3 of 4096 bytes)");
  // A request that is not one, and a clean end of the stream.
  std::tie(Message, Growth) = compileServerOn(frameHeader(202, 0, 0));
  CHECK(Message == "compile server: not a frame of this protocol (type 202, "
                   "expected 201 to 201)");
  std::tie(Message, Growth) = compileServerOn({});
  CHECK(Message == "");
}
