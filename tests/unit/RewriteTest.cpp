// Automatic source transformations (compile/Rewrite.h) on small kernels:
// the sites offered and those that must not be, the instrumented text
// compiling with clang and nvcc at every value, and its resolution back to
// plain source.
#include "compile/Rewrite.h"
#include "compile/host/HostJit.h"
#ifdef R3_HAVE_CUDA
#include "compile/cuda/CudaCompiler.h"
#endif
#include "support/FileUtil.h"
#include "support/Process.h"

#include "Catch.h"

#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace r3;

namespace {

std::string input(const std::string &Name) {
  return std::string(R3_TEST_INPUTS) + "/" + Name;
}

std::string text(const std::string &Path) {
  auto T = readWholeFile(Path, "test input");
  REQUIRE(T);
  return *T;
}

const RewriteSite *site(const RewriteModel &M, const std::string &Knob) {
  for (const RewriteSite &S : M.Sites)
    if (S.Knob == Knob)
      return &S;
  return nullptr;
}

ParamFact pointer(size_t Region, bool Written) {
  ParamFact F;
  F.Pointer = true;
  F.Region = Region;
  F.RegionWritten = Written;
  return F;
}

/// Writes Text to a file named like Like (same extension) in a temp folder.
std::string writeTemp(const std::string &Text, const std::string &Like) {
  std::string Dir =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
      "/r3-rewrite-test-" + std::to_string(::getpid());
  std::string Mk = "mkdir -p " + Dir;
  REQUIRE(std::system(Mk.c_str()) == 0);
  std::string Path = Dir + "/" + Like.substr(Like.rfind('/') + 1);
  std::ofstream(Path) << Text;
  return Path;
}

#ifdef R3_HAVE_CUDA
/// Checks that the CUDA file Path compiles with the defines D, with clang
/// (as r3 reads it) and with nvcc.
void checkCompiles(const std::string &Path, const std::vector<std::string> &D) {
  auto Clang = runCapturing([&] {
    auto A = cudaSyntaxArgv(Path, D, 9, 0);
    A.push_back("-fsyntax-only");
    return A;
  }());
  REQUIRE(Clang);
  INFO(Clang->Output);
  CHECK(Clang->succeeded());
  std::vector<std::string> Nvcc = {"nvcc", "-cubin",        "-arch=sm_90",
                                   "-o",   Path + ".cubin", Path};
  Nvcc.insert(Nvcc.end(), D.begin(), D.end());
  auto N = runCapturing(Nvcc);
  REQUIRE(N);
  INFO(N->Output);
  CHECK(N->succeeded());
}
#endif

} // namespace

#ifdef R3_HAVE_CUDA
TEST_CASE("rewrite sites of a CUDA kernel", "[rewrite]") {
  ::setenv("R3_SHARE_DIR", R3_TEST_SHARE, 0);
  std::string File = input("rewrite-kernels.cu");
  std::string T = text(File);
  // n; in (read, never written); out and inout (written); c (const).
  std::vector<ParamFact> Facts = {ParamFact{}, pointer(0, false),
                                  pointer(1, true), pointer(2, true),
                                  pointer(3, false)};
  auto M = rewritesOf(cudaSyntaxArgv(File, {}, 9, 0), File, T, "mix", Facts);
  REQUIRE(M);

  // The constant loop may unroll fully; the annotated one is left alone;
  // the one with a variable trip count has no full unroll.
  const RewriteSite *L7 = site(*M, "R3_RW_UNROLL_L7");
  REQUIRE(L7);
  CHECK(L7->Values == std::vector<std::string>{"0", "1", "2", "4", "8", "-1"});
  CHECK(site(*M, "R3_RW_UNROLL_L10") == nullptr);
  const RewriteSite *L12 = site(*M, "R3_RW_UNROLL_L12");
  REQUIRE(L12);
  CHECK(L12->Values == std::vector<std::string>{"0", "1", "2", "4", "8"});

  const RewriteSite *R = site(*M, "R3_RW_RESTRICT");
  REQUIRE(R);
  CHECK(R->Values == std::vector<std::string>{"0", "1", "2"});
  REQUIRE(R->Params.size() == 4);
  CHECK(R->Params[0].Name == "in");
  CHECK(R->Params[0].Const);
  CHECK_FALSE(R->Params[1].Const); // out: written
  CHECK_FALSE(R->Params[2].Const); // inout: written
  CHECK_FALSE(R->Params[3].Const); // c: const already

  SECTION("every value compiles with clang and nvcc") {
    std::string I = instrument(T, *M);
    CHECK(resolve(I, {}) == T);
    std::string Path = writeTemp(I, File);
    for (const char *U : {"0", "1", "4", "-1"})
      for (const char *Rv : {"0", "1", "2"}) {
        checkCompiles(Path, {std::string("-DR3_RW_UNROLL_L7=") + U,
                             std::string("-DR3_RW_RESTRICT=") + Rv});
      }
  }

  SECTION("resolved to plain source") {
    std::string Plain = resolve(instrument(T, *M), {{"R3_RW_UNROLL_L7", "4"},
                                                    {"R3_RW_UNROLL_L12", "8"},
                                                    {"R3_RW_RESTRICT", "2"}});
    CHECK(Plain.find("  #pragma unroll 4\n  for (int j = 0; j < 8; ++j)") !=
          std::string::npos);
    CHECK(Plain.find("  #pragma unroll 8\n  for (int j = i;") !=
          std::string::npos);
    CHECK(Plain.find("const float *__restrict__ in,") != std::string::npos);
    CHECK(Plain.find("float *__restrict__ out,") != std::string::npos);
    CHECK(Plain.find("const float *__restrict__ c)") != std::string::npos);
    CHECK(Plain.find("R3_RW") == std::string::npos);
    std::string One = resolve(instrument(T, *M), {{"R3_RW_RESTRICT", "1"}});
    CHECK(One.find("float *__restrict__ in,") != std::string::npos);
    CHECK(One.find("const float *__restrict__ in") == std::string::npos);
  }
}

TEST_CASE("no restrict where the recorded pointers alias", "[rewrite]") {
  ::setenv("R3_SHARE_DIR", R3_TEST_SHARE, 0);
  std::string File = input("rewrite-kernels.cu");
  std::string T = text(File);
  // out and inout point into one region: neither may be restrict.
  std::vector<ParamFact> Facts = {ParamFact{}, pointer(0, false),
                                  pointer(1, true), pointer(1, true),
                                  pointer(3, false)};
  auto M = rewritesOf(cudaSyntaxArgv(File, {}, 9, 0), File, T, "mix", Facts);
  REQUIRE(M);
  const RewriteSite *R = site(*M, "R3_RW_RESTRICT");
  REQUIRE(R);
  REQUIRE(R->Params.size() == 2);
  CHECK(R->Params[0].Name == "in");
  CHECK(R->Params[1].Name == "c");
  // Without facts from a recording, no pointer is known not to alias.
  auto None = rewritesOf(cudaSyntaxArgv(File, {}, 9, 0), File, T, "mix", {});
  REQUIRE(None);
  CHECK(site(*None, "R3_RW_RESTRICT") == nullptr);
}

TEST_CASE("a pointer copied or written is not const", "[rewrite]") {
  ::setenv("R3_SHARE_DIR", R3_TEST_SHARE, 0);
  std::string File = input("rewrite-kernels.cu");
  std::string T = text(File);
  // The recording saw neither region change, but the code writes through
  // a copy of p and through q.
  auto M = rewritesOf(cudaSyntaxArgv(File, {}, 9, 0), File, T, "escape",
                      {pointer(0, false), pointer(1, false)});
  REQUIRE(M);
  const RewriteSite *R = site(*M, "R3_RW_RESTRICT");
  REQUIRE(R);
  CHECK(R->Values == std::vector<std::string>{"0", "1"});
  for (const RewriteSite::Param &P : R->Params)
    CHECK_FALSE(P.Const);
  CHECK(site(*M, "R3_RW_UNROLL_L21") == nullptr); // no loops
  CHECK(M->Sites.size() == 1);
}

TEST_CASE("one element per thread as a grid-stride loop", "[rewrite]") {
  ::setenv("R3_SHARE_DIR", R3_TEST_SHARE, 0);
  std::string File = input("rewrite-gridstride.cu");
  std::string T = text(File);
  auto model = [&](const std::string &Kernel) {
    auto M = rewritesOf(cudaSyntaxArgv(File, {}, 9, 0), File, T, Kernel, {});
    REQUIRE(M);
    return *M;
  };
  RewriteModel Saxpy = model("saxpy"), Window = model("window");
  RewriteModel Lookup = model("lookup"), Select = model("select");
  for (const RewriteModel *M : {&Saxpy, &Window, &Lookup, &Select}) {
    const RewriteSite *G = site(*M, GridStrideKnob);
    REQUIRE(G);
    CHECK(G->Values == std::vector<std::string>{"0", "1", "2", "4"});
    CHECK_FALSE(M->GridStride); // as written, one element per thread
  }
  CHECK(site(Saxpy, GridStrideKnob)->Describe.find("(i, line 5)") !=
        std::string::npos);
  CHECK(site(Window, "R3_RW_UNROLL_L17")); // the loop of the rest, too
  // Shapes the loop would change the meaning of, or that stride already.
  for (const char *K : {"barrier", "bump", "after", "plane", "strided",
                        "shrink", "remote", "inner"}) {
    INFO(K);
    CHECK(site(model(K), GridStrideKnob) == nullptr);
  }
  CHECK(model("strided").GridStride);

  // Both kernels' sites in one text, as a file with two tuned kernels is
  // not: each model instruments the text alone.
  for (const RewriteModel *M : {&Saxpy, &Window, &Lookup, &Select}) {
    std::string I = instrument(T, *M);
    CHECK(resolve(I, {}) == T);
    std::string Path = writeTemp(I, File);
    for (const char *V : {"0", "1", "2", "4"}) {
      INFO(M->Kernel << " " << V);
      checkCompiles(Path, {std::string("-DR3_RW_GRIDSTRIDE=") + V,
                           "-DR3_RW_UNROLL_L17=4"});
    }
  }

  SECTION("resolved to plain source") {
    std::string One = resolve(instrument(T, Saxpy), {{GridStrideKnob, "1"}});
    CHECK(One.find("  for (int i = blockIdx.x * blockDim.x + threadIdx.x; "
                   "(i < n); i += gridDim.x * blockDim.x) {\n"
                   "    y[i] = a * x[i] + y[i];\n  }\n}") != std::string::npos);
    CHECK(One.find("R3_RW") == std::string::npos);
    std::string Two = resolve(instrument(T, Window), {{GridStrideKnob, "2"}});
    CHECK(Two.find("  for (unsigned int r3_pass = (unsigned int)blockIdx.x * "
                   "blockDim.x * 2; r3_pass < (n); r3_pass += gridDim.x * "
                   "blockDim.x * 2)\n#pragma unroll\n") != std::string::npos);
    CHECK(Two.find("    if (!(i >= n)) {\n  float s = 0;") !=
          std::string::npos);
    CHECK(Two.find("  out[i] = s * scale;\n  }\n}") != std::string::npos);
    std::string Sel = resolve(instrument(T, Select), {{GridStrideKnob, "4"}});
    CHECK(Sel.find("  if (mat[i] != m)\n    continue;\n  if (mat[i] < 0) "
                   "continue;\n  out[i] = 2.0f * i;\n  }\n}") !=
          std::string::npos);
  }

  SECTION("every value computes the same on any grid") {
    // The kernels run on an emulated grid on the host: the recorded grid
    // (8 blocks of 128 cover the 1000 elements), a grid that is too small
    // for one element per thread, a coarsened grid, and one block.
    std::string Harness = input("rewrite-gridstride-host.cpp");
    auto run = [&](const std::string &Source, const char *Kernel,
                   const char *Grid) {
      std::string Path = writeTemp(Source, "resolved.cu");
      std::string Exe = Path + ".exe";
      auto B = runCapturing({hostClang(), "-x", "c++", "-O1", "-w",
                             "-DR3_KERNEL_FILE=\"" + Path + "\"", Harness, "-o",
                             Exe});
      REQUIRE(B);
      INFO(B->Output);
      REQUIRE(B->succeeded());
      auto R = runCapturing({Exe, Kernel, Grid, "128"});
      REQUIRE(R);
      REQUIRE(R->succeeded());
      return R->Output;
    };
    for (const auto &[M, Kernel] :
         {std::pair<const RewriteModel *, const char *>{&Saxpy, "saxpy"},
          {&Window, "window"},
          {&Select, "select"}}) {
      std::string I = instrument(T, *M);
      std::string Want = run(resolve(I, {}), Kernel, "8");
      CHECK(std::count(Want.begin(), Want.end(), '\n') == 1000);
      CHECK(run(resolve(I, {}), Kernel, "3") != Want); // as written: no
      for (const char *V : {"1", "2", "4"})
        for (const char *Grid : {"8", "3", "4", "1"}) {
          INFO(Kernel << " R3_RW_GRIDSTRIDE=" << V << " grid " << Grid);
          CHECK(run(resolve(I, {{GridStrideKnob, V}}), Kernel, Grid) == Want);
        }
    }
  }
}

TEST_CASE("a kernel the file does not define", "[rewrite]") {
  ::setenv("R3_SHARE_DIR", R3_TEST_SHARE, 0);
  std::string File = input("rewrite-kernels.cu");
  auto M = rewritesOf(cudaSyntaxArgv(File, {}, 9, 0), File, text(File),
                      "absent", {});
  REQUIRE_FALSE(M);
  CHECK(M.error().message().find("no definition of absent") !=
        std::string::npos);
}
#endif

TEST_CASE("rewrite sites of a host kernel", "[rewrite]") {
  std::string File = input("rewrite-host.c");
  std::string T = text(File);
  auto Argv = hostSyntaxArgv(File, {});
  REQUIRE(Argv);
  auto M = rewritesOf(
      *Argv, File, T, "saxpy",
      {ParamFact{}, ParamFact{}, pointer(0, false), pointer(1, true)});
  REQUIRE(M);
  REQUIRE(site(*M, "R3_RW_UNROLL_L2"));
  const RewriteSite *R = site(*M, "R3_RW_RESTRICT");
  REQUIRE(R);
  REQUIRE(R->Params.size() == 2);
  CHECK(R->Params[0].Const);
  std::string I = instrument(T, *M);
  CHECK(resolve(I, {}) == T);
  std::string Path = writeTemp(I, File);
  for (const char *V : {"0", "1", "2"}) {
    auto A = hostSyntaxArgv(Path, {std::string("-DR3_RW_RESTRICT=") + V,
                                   "-DR3_RW_UNROLL_L2=8", "-fsyntax-only",
                                   "-Werror"});
    REQUIRE(A);
    auto C = runCapturing(*A);
    REQUIRE(C);
    INFO(C->Output);
    CHECK(C->succeeded());
  }
}
