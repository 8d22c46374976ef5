// The host JIT: small kernels in LLVM IR (Inputs/jit-*.ll, as clang emits
// them for an application built without -march) compiled under several
// pipelines and codegen levels and called through the entry trampoline with
// argument slots; the errors a user meets (bad pipeline, bad level, undefined
// symbol); candidates that coexist and are released; C and C++ sources
// compiled by clang-19.
#include "Catch.h"

#include "compile/host/HostJit.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace r3;

namespace {

const std::vector<std::string> Pipelines = {
    "default<O0>", "default<O2>", "default<O3>",
    "function(sroa,instcombine,gvn,simplifycfg),function(loop-mssa(licm))"};

std::string input(const std::string &Name) {
  return std::string(R3_TEST_INPUTS) + "/" + Name;
}

std::vector<uint8_t> toBitcode(const llvm::Module &M) {
  llvm::SmallVector<char, 0> Bytes;
  llvm::raw_svector_ostream OS(Bytes);
  llvm::WriteBitcodeToFile(M, OS);
  return std::vector<uint8_t>(Bytes.begin(), Bytes.end());
}

/// The bitcode of an IR file in Inputs/.
std::vector<uint8_t> bitcodeOfFile(const std::string &Name) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  auto M = llvm::parseAssemblyFile(input(Name), Diag, Ctx);
  INFO(Diag.getMessage().str());
  REQUIRE(M);
  return toBitcode(*M);
}

/// The bitcode of IR text (for kernels of one or two lines).
std::vector<uint8_t> bitcodeOfText(const std::string &Text) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  auto M = llvm::parseAssemblyString(Text, Diag, Ctx);
  INFO(Diag.getMessage().str());
  REQUIRE(M);
  return toBitcode(*M);
}

std::unique_ptr<HostJit> makeJit() {
  auto J = HostJit::create();
  INFO((J ? "" : J.error().message()));
  REQUIRE(J);
  return std::move(*J);
}

HostEntry compileOk(HostJit &J, const std::vector<uint8_t> &Bitcode,
                    const std::string &Kernel, HostCompileOptions Options = {},
                    const std::map<std::string, uint64_t> &Globals = {}) {
  HostCompileReport Report;
  auto E = J.compile(Bitcode, Kernel, Globals, Options, Report);
  INFO(Kernel << " under " << Options.Pipeline << ": "
              << (E ? "" : E.error().message()));
  REQUIRE(E);
  return *E;
}

std::string compileError(HostJit &J, const std::vector<uint8_t> &Bitcode,
                         const std::string &Kernel,
                         HostCompileOptions Options = {},
                         const std::map<std::string, uint64_t> &Globals = {}) {
  HostCompileReport Report;
  auto E = J.compile(Bitcode, Kernel, Globals, Options, Report);
  REQUIRE_FALSE(E);
  return E.error().message();
}

template <typename T> uint64_t slot(T Value) {
  static_assert(sizeof(T) <= 8);
  uint64_t S = 0;
  std::memcpy(&S, &Value, sizeof(T));
  return S;
}
template <typename T> uint64_t slot(T *Pointer) {
  return reinterpret_cast<uint64_t>(Pointer);
}

template <typename T> T fromSlot(uint64_t S) {
  T Value;
  std::memcpy(&Value, &S, sizeof(T));
  return Value;
}

bool contains(const std::string &Haystack, const std::string &Needle) {
  return Haystack.find(Needle) != std::string::npos;
}

// Data the "bump" kernel reads and writes as external globals.
int Counter = 0;
double Scale[4] = {0.5, 1.0, 1.5, 2.0};

} // namespace

TEST_CASE("saxpy gives the application's unfused results under every "
          "pipeline and codegen level") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfFile("jit-saxpy.ll");
  const int N = 1003; // not a multiple of any vector width: epilogues run
  const float A = 0.1f;
  std::vector<float> X(N), Y0(N), Expected(N);
  int Fusable = 0;
  for (int I = 0; I < N; ++I) {
    X[I] = 1.0f + I * 1.37e-3f;
    Y0[I] = 0.3f - I * 7.1e-4f;
    volatile float Product = A * X[I];
    Expected[I] = Product + Y0[I];
    Fusable += std::fmaf(A, X[I], Y0[I]) != Expected[I];
  }
  // Else the test could not tell a fused multiply-add from the application's.
  REQUIRE(Fusable > 0);
  for (const std::string &Pipeline : Pipelines)
    for (int Level = 0; Level <= 3; ++Level) {
      INFO(Pipeline << " at codegen level " << Level);
      HostEntry E = compileOk(*J, Bitcode, "saxpy", {Pipeline, Level});
      std::vector<float> Y = Y0;
      uint64_t Args[] = {slot(N), slot(A), slot(X.data()), slot(Y.data())};
      CHECK(E(Args) == 0);
      CHECK(std::memcmp(Y.data(), Expected.data(), N * sizeof(float)) == 0);
      REQUIRE_FALSE(J->release(E));
    }
}

TEST_CASE("an integer kernel returns its i64 result and takes narrow "
          "parameters from slots") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfFile("jit-sum.ll");
  std::vector<int> V = {3, -4, 5, 100000, -7};
  long Expected = 0;
  for (int X : V)
    Expected += static_cast<long>(X) * X;
  for (const std::string &Pipeline : Pipelines) {
    HostEntry E = compileOk(*J, Bitcode, "sum_squares", {Pipeline, 2});
    // The upper bytes of the i8 slot are junk the kernel must not see.
    uint64_t Args[] = {slot(V.data()), slot(long(V.size())), 0xffffff00u | 3u};
    CHECK(static_cast<long>(E(Args)) == Expected << 3);
  }
}

TEST_CASE("external globals resolve to the addresses given") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfFile("jit-glob.ll");
  std::map<std::string, uint64_t> Globals = {{"counter", slot(&Counter)},
                                             {"scale", slot(&Scale[0])}};
  for (const std::string &Pipeline : Pipelines) {
    Counter = 10;
    HostEntry E = compileOk(*J, Bitcode, "bump", {Pipeline, 2}, Globals);
    uint64_t Args[] = {slot(5)};
    CHECK(fromSlot<double>(E(Args)) == 5.0 * 15);
    CHECK(Counter == 15);
  }
}

TEST_CASE("a kernel calls libm from this process") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfFile("jit-norm.ll");
  std::vector<double> V = {3.0, 4.0, 12.0};
  for (const std::string &Pipeline : Pipelines) {
    HostEntry E = compileOk(*J, Bitcode, "norm", {Pipeline, 3});
    uint64_t Args[] = {slot(V.data()), slot(int(V.size()))};
    CHECK(fromSlot<double>(E(Args)) == 13.0);
  }
}

TEST_CASE("the trampoline widens float, pointer and i1 results") {
  auto J = makeJit();
  auto F =
      bitcodeOfText("define float @half(float %x) {\n %h = fmul float %x, 0.5\n"
                    " ret float %h\n}\n");
  uint64_t FArgs[] = {slot(3.0f)};
  CHECK(fromSlot<float>(compileOk(*J, F, "half")(FArgs)) == 1.5f);
  CHECK(compileOk(*J, F, "half")(FArgs) >> 32 == 0);
  auto P = bitcodeOfText("define ptr @next(ptr %p) {\n"
                         " %q = getelementptr i8, ptr %p, i64 4\n"
                         " ret ptr %q\n}\n");
  int Array[2];
  uint64_t PArgs[] = {slot(&Array[0])};
  CHECK(compileOk(*J, P, "next")(PArgs) == slot(&Array[1]));
  auto B = bitcodeOfText("define zeroext i1 @neg(i32 %x) {\n"
                         " %c = icmp slt i32 %x, 0\n ret i1 %c\n}\n");
  uint64_t BArgs[] = {slot(-5)};
  CHECK(compileOk(*J, B, "neg")(BArgs) == 1);
}

TEST_CASE("a parameter that does not fit a slot is refused") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfText("define i128 @wide(i128 %x) {\n"
                               " ret i128 %x\n}\n");
  CHECK(compileError(*J, Bitcode, "wide") ==
        "parameter 1 of 'wide' has type i128, expected a scalar of at most 8 "
        "bytes (an integer, a floating-point value or a pointer)");
}

TEST_CASE("the report counts instructions and times the stages") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfFile("jit-saxpy.ll");
  HostCompileReport O0, O2, Custom;
  REQUIRE(J->compile(Bitcode, "saxpy", {}, {"default<O0>", 0}, O0));
  REQUIRE(J->compile(Bitcode, "saxpy", {}, {"default<O2>", 2}, O2));
  REQUIRE(J->compile(Bitcode, "saxpy", {}, {Pipelines[3], 2}, Custom));
  CHECK(O0.InstructionsBefore == O2.InstructionsBefore);
  CHECK(O0.InstructionsAfter == O0.InstructionsBefore); // O0 changes nothing
  CHECK(O2.InstructionsAfter != O2.InstructionsBefore); // vectorized
  CHECK(Custom.InstructionsAfter < Custom.InstructionsBefore); // sroa
  CHECK(O2.OptimizeMs > 0);
  CHECK(O2.CodegenMs > 0);
  CHECK(O2.CompileMs >= O2.OptimizeMs + O2.CodegenMs);
}

TEST_CASE("a bad pipeline is an error with LLVM's message and the text") {
  const std::string Bad = "function(foo)";
  Error E = checkPipeline(Bad);
  REQUIRE(E);
  CHECK(E.message() == "pipeline 'function(foo)': unknown function pass 'foo'");
  for (const std::string &Pipeline : Pipelines)
    CHECK_FALSE(checkPipeline(Pipeline));
  auto J = makeJit();
  CHECK(compileError(*J, bitcodeOfFile("jit-sum.ll"), "sum_squares",
                     {Bad, 2}) == E.message());
  CHECK(J->liveCandidates() == 0);
}

TEST_CASE("a codegen level outside 0-3 is an error") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfFile("jit-sum.ll");
  CHECK(compileError(*J, Bitcode, "sum_squares", {"default<O2>", 4}) ==
        "codegen optimization level 4: expected 0, 1, 2 or 3");
  CHECK(compileError(*J, Bitcode, "sum_squares", {"default<O2>", -1}) ==
        "codegen optimization level -1: expected 0, 1, 2 or 3");
}

TEST_CASE("undefined symbols are errors naming them") {
  auto J = makeJit();
  CHECK(compileError(*J, bitcodeOfFile("jit-undef.ll"), "calls_helper") ==
        "undefined symbol 'helper' (defined outside the kernel's translation "
        "unit?)");
  CHECK(compileError(*J, bitcodeOfFile("jit-glob.ll"), "bump", {},
                     {{"scale", slot(&Scale[0])}}) ==
        "undefined global 'counter': no recorded address for it, and this "
        "process does not define it");
  CHECK(compileError(*J, bitcodeOfFile("jit-sum.ll"), "nope") ==
        "kernel 'nope' is not defined in its bitcode");
  std::vector<uint8_t> Junk = {1, 2, 3, 4};
  CHECK(contains(compileError(*J, Junk, "k"), "reading kernel bitcode: "));
  CHECK(J->liveCandidates() == 0);
}

TEST_CASE("candidates coexist in their own JITDylibs and are released") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfFile("jit-sum.ll");
  std::vector<int> V = {1, 2, 3};
  uint64_t Args[] = {slot(V.data()), slot(3L), slot(uint8_t(0))};
  HostEntry A = compileOk(*J, Bitcode, "sum_squares", {"default<O0>", 0});
  HostEntry B = compileOk(*J, Bitcode, "sum_squares", {"default<O3>", 3});
  CHECK(A != B);
  CHECK(J->liveCandidates() == 2);
  CHECK(A(Args) == 14);
  CHECK(B(Args) == 14);
  REQUIRE_FALSE(J->release(A));
  CHECK(J->liveCandidates() == 1);
  CHECK(B(Args) == 14);
  Error Again = J->release(A);
  REQUIRE(Again);
  CHECK(contains(Again.message(), "expected an entry compiled by this JIT "
                                  "and not yet released"));
  // A replay server compiles thousands: compile and release in a loop.
  for (int I = 0; I < 40; ++I) {
    HostEntry C = compileOk(*J, Bitcode, "sum_squares", {"default<O1>", 1});
    CHECK(C(Args) == 14);
    REQUIRE_FALSE(J->release(C));
  }
  CHECK(J->liveCandidates() == 1);
}

TEST_CASE("the recorded -O level is read from the module flag") {
  auto Level = recordedOptLevel(bitcodeOfFile("jit-sum.ll"));
  REQUIRE(Level);
  CHECK(*Level == 2); // no flag: the default
  auto Flagged = bitcodeOfText("define void @k() {\n ret void\n}\n"
                               "!llvm.module.flags = !{!0}\n"
                               "!0 = !{i32 2, !\"r3.opt-level\", i32 1}\n");
  Level = recordedOptLevel(Flagged);
  REQUIRE(Level);
  CHECK(*Level == 1);
}

TEST_CASE("a C source compiles, extracts and runs") {
  auto Bitcode = compileHostSource(input("jit-source.c"), "weighted_dot", {});
  INFO((Bitcode ? "" : Bitcode.error().message()));
  REQUIRE(Bitcode);
  auto Level = recordedOptLevel(*Bitcode);
  REQUIRE(Level);
  CHECK(*Level == 2);
  auto J = makeJit();
  int Calls = 0;
  HostEntry E = compileOk(*J, *Bitcode, "weighted_dot", {"default<O2>", 2},
                          {{"calls", slot(&Calls)}});
  std::vector<int> A = {1, 2, 3, 4, 5}, B = {5, 4, 3, 2, 1};
  uint64_t Args[] = {slot(A.data()), slot(B.data()), slot(5)};
  CHECK(E(Args) == 5 * 1 + 8 * 2 + 9 * 3 + 8 * 4 + 5 * 1);
  CHECK(Calls == 1);
}

TEST_CASE("a C++ source compiles with its flags and a mangled kernel name") {
  auto Bitcode =
      compileHostSource(input("jit-source.cpp"), "_Z5scalePfif", {"-O0"});
  INFO((Bitcode ? "" : Bitcode.error().message()));
  REQUIRE(Bitcode);
  auto Level = recordedOptLevel(*Bitcode);
  REQUIRE(Level);
  CHECK(*Level == 0); // -O0 reached clang, and extraction saw optnone
  auto J = makeJit();
  HostEntry E = compileOk(*J, *Bitcode, "_Z5scalePfif", {"default<O3>", 3});
  std::vector<float> V = {1, 2, 3};
  uint64_t Args[] = {slot(V.data()), slot(3), slot(0.5f)};
  E(Args);
  CHECK(V == std::vector<float>{1, 2, 3});
  float By = 3;
  Args[2] = slot(By);
  E(Args);
  CHECK(V == std::vector<float>{6, 12, 18});
}

TEST_CASE("compileHostSource reports clang's diagnostics and bad paths") {
  auto Broken = compileHostSource(input("jit-broken.c"), "broken", {});
  REQUIRE_FALSE(Broken);
  const std::string &M = Broken.error().message();
  CHECK(contains(M, "compiling '" + input("jit-broken.c") + "' with "));
  CHECK(contains(M, "failed (exit status 1):\n"));
  CHECK(contains(M, "jit-broken.c:2:"));
  CHECK(contains(M, "use of undeclared identifier 'undeclared_thing'"));
  CHECK(M.back() != '\n');

  auto Missing = compileHostSource(input("jit-missing.c"), "k", {});
  REQUIRE_FALSE(Missing);
  CHECK(Missing.error().message() ==
        "source file '" + input("jit-missing.c") + "' does not exist");

  auto Fortran = compileHostSource("kernel.f90", "k", {});
  REQUIRE_FALSE(Fortran);
  CHECK(Fortran.error().message() ==
        "source file 'kernel.f90': expected a C or C++ extension (.c, .cc, "
        ".cpp, .cxx, .C), got '.f90'");

  auto NoKernel = compileHostSource(input("jit-source.c"), "absent", {});
  REQUIRE_FALSE(NoKernel);
  CHECK(contains(NoKernel.error().message(), "kernel 'absent'"));
}

TEST_CASE("R3_CLANG chooses the clang that compileHostSource runs") {
  CHECK(contains(hostClang(), "clang"));
  ::setenv("R3_CLANG", "/nonexistent/clang", 1);
  CHECK(hostClang() == "/nonexistent/clang");
  auto R = compileHostSource(input("jit-source.c"), "weighted_dot", {});
  ::unsetenv("R3_CLANG");
  REQUIRE_FALSE(R);
  CHECK(R.error().message() ==
        "running '/nonexistent/clang': No such file or directory");
}

TEST_CASE("a weak reference the process does not define resolves to null") {
  auto J = makeJit();
  auto Bitcode = bitcodeOfText("@r3_test_absent = extern_weak global i32\n"
                               "define i1 @present() {\n"
                               " %c = icmp ne ptr @r3_test_absent, null\n"
                               " ret i1 %c\n}\n");
  uint64_t Args[1] = {};
  CHECK(compileOk(*J, Bitcode, "present", {"default<O0>", 0})(Args) == 0);
}

TEST_CASE("an empty pipeline is refused with LLVM's message") {
  Error E = checkPipeline("");
  REQUIRE(E);
  CHECK(E.message() == "pipeline '': unknown pass name ''");
}

TEST_CASE("instcombine in a user's pipeline never aborts on a missed "
          "fixpoint",
          "[host-jit]") {
  using r3::withoutFixpointAborts;
  CHECK(withoutFixpointAborts("function(instcombine)") ==
        "function(instcombine<no-verify-fixpoint>)");
  CHECK(withoutFixpointAborts("function(sroa,instcombine,gvn),instcombine") ==
        "function(sroa,instcombine<no-verify-fixpoint>,gvn),"
        "instcombine<no-verify-fixpoint>");
  CHECK(withoutFixpointAborts("function(instcombine<max-iterations=2>)") ==
        "function(instcombine<max-iterations=2;no-verify-fixpoint>)");
  // A user who asks for the check keeps it; other passes are untouched.
  CHECK(withoutFixpointAborts("function(instcombine<verify-fixpoint>)") ==
        "function(instcombine<verify-fixpoint>)");
  CHECK(withoutFixpointAborts("function(aggressive-instcombine)") ==
        "function(aggressive-instcombine)");
  CHECK(withoutFixpointAborts("default<O3>") == "default<O3>");
  CHECK(!r3::checkPipeline(withoutFixpointAborts(
            "function(instcombine<max-iterations=2>,instcombine)")));
}
