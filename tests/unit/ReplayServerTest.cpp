// The replay server with real server processes (the r3 binary's hidden
// `__replay-server`): passing, crashing, looping, wrong, uncompilable and
// mis-shaped candidates, with the next candidate passing after each; the
// protocol's encoding; the fixed-address mapper; the sandbox.
#include "Catch.h"

#include "HostCapture.h"
#include "replay/Sandbox.h"
#include "replay/ServerClient.h"
#include "replay/ServerProtocol.h"
#include "replay/host/RegionMap.h"
#include "support/Machine.h"

#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace r3;
namespace fs = std::filesystem;

namespace {
std::string tempPath(const std::string &Name) {
  return (fs::temp_directory_path() /
          ("r3-replay-" + std::to_string(::getpid()) + "-" + Name))
      .string();
}

std::string fixture(const std::string &Kind) {
  std::string Path = tempPath(Kind + ".h5");
  if (!fs::exists(Path))
    REQUIRE_FALSE(testing::makeHostCapture(Kind, Path));
  return Path;
}

std::unique_ptr<ServerClient> client(const std::string &Capture) {
  ServerOptions O;
  O.Command = {R3_BINARY, "__replay-server"};
  O.CapturePath = Capture;
  O.RunSlackSeconds = 1;
  auto C = ServerClient::create(O);
  if (!C)
    FAIL(C.error().message());
  return std::move(*C);
}

Candidate saxpy(uint32_t Launch = 0) {
  Candidate C;
  C.Kernel = "saxpy";
  C.Launches = {Launch};
  C.Warmup = 1;
  C.Repetitions = 5;
  C.TimeoutSeconds = 5;
  return C;
}

Candidate variant(const char *IR) {
  Candidate C = saxpy();
  C.Code = CodeKind::Bitcode;
  auto B = testing::bitcodeFromIR(IR);
  REQUIRE(B);
  C.Image = *B;
  return C;
}

CandidateResult evaluate(ServerClient &S, const Candidate &C) {
  auto R = S.evaluate(C);
  if (!R)
    FAIL(R.error().message());
  INFO(R->Message);
  return *R;
}

void requirePasses(ServerClient &S, const Candidate &C) {
  CandidateResult R = evaluate(S, C);
  INFO(R.Message);
  REQUIRE(R.Verified);
  CHECK(R.Failure == FailureKind::None);
  CHECK(R.TimesNs.size() == C.Repetitions);
}
} // namespace

TEST_CASE("replay server: the recorded kernel verifies, timed") {
  auto S = client(fixture("saxpy"));
  CHECK(
      (S->opened().Sandbox == "landlock" || S->opened().Sandbox == "rlimits"));
  CandidateResult R = evaluate(*S, saxpy());
  REQUIRE(R.Verified);
  CHECK(R.TimesNs.size() == 5);
  CHECK(R.Pipeline == "default<O2>"); // from the module's r3.opt-level
  CHECK(R.CodegenOpt == 2);
  CHECK(R.CompileMs > 0);
  CHECK_FALSE(R.Registers.has_value()); // none on the host
  CHECK_FALSE(R.Poisoned); // saxpy reads y: the probe turns poisoning off
  CHECK(R.Sandbox == S->opened().Sandbox);
  requirePasses(*S, saxpy(1)); // the second launch, other data
  for (const char *P :
       {"default<O0>", "default<O3>", "function(instcombine)"}) {
    Candidate C = saxpy();
    C.Pipeline = P;
    C.CodegenOpt = 0;
    R = evaluate(*S, C);
    CHECK(R.Verified);
    CHECK(R.Pipeline == P);
  }
  CHECK(S->starts() == 1);
}

TEST_CASE("replay server: a crash is a result and the next candidate runs") {
  auto S = client(fixture("saxpy"));
  CandidateResult R = evaluate(*S, variant(testing::SaxpyNullIR));
  CHECK_FALSE(R.Verified);
  CHECK(R.Failure == FailureKind::Crashed);
  CHECK(R.Message.starts_with("crashed: SIG"));
  CHECK(R.Message.find("while running the candidate") != std::string::npos);
  CHECK(R.Pipeline == "default<O2>"); // from Running, before the crash
  CHECK(S->serverPid() == -1);
  requirePasses(*S, saxpy());
  CHECK(S->starts() == 2);
}

TEST_CASE("replay server: an endless loop times out and the next candidate "
          "runs") {
  auto S = client(fixture("saxpy"));
  Candidate Loop = variant(testing::SaxpyLoopIR);
  Loop.TimeoutSeconds = 0.3;
  Loop.Warmup = 0;
  Loop.Repetitions = 1;
  CandidateResult R = evaluate(*S, Loop);
  INFO(R.Message);
  CHECK(R.Failure == FailureKind::Timeout);
  CHECK(R.Message.starts_with("timeout: a run took longer than 0.3 s"));
  requirePasses(*S, saxpy());
}

TEST_CASE("replay server: a wrong variant is wrong_result, precisely") {
  auto S = client(fixture("saxpy"));
  CandidateResult R = evaluate(*S, variant(testing::SaxpyWrongIR));
  CHECK(R.Failure == FailureKind::WrongResult);
  CHECK(R.Message.starts_with("launch 0: "));
  CHECK(R.Message.find("mismatches in 1 output: region 'y' (heap "
                       "0x4a0000003010 +4000): byte ") != std::string::npos);
  Candidate Typed = variant(testing::SaxpyWrongIR);
  Typed.Verify.Type = ElementType::F32;
  Typed.Verify.Tolerance = ToleranceKind::Abs;
  Typed.Verify.Value = 0.5;
  R = evaluate(*S, Typed);
  CHECK(R.Message.starts_with(
      "launch 0: 1000 mismatches in 1 output: region 'y' (heap 0x4a0000003010 "
      "+4000): element 0 (f32): expected 0, got 1 (abs error 1 > 0.5)"));
  Typed.Verify.Value = 1.0; // within the loosened tolerance
  CHECK(evaluate(*S, Typed).Verified);
  requirePasses(*S, saxpy());
}

TEST_CASE("replay server: compile errors and mis-shaped kernels") {
  auto S = client(fixture("saxpy"));
  Candidate Garbage = saxpy();
  Garbage.Code = CodeKind::Bitcode;
  Garbage.Image = {1, 2, 3};
  CandidateResult R = evaluate(*S, Garbage);
  CHECK(R.Failure == FailureKind::CompileError);
  CHECK(R.Message.starts_with("the code is not LLVM bitcode"));

  R = evaluate(*S, variant(testing::SaxpyThreeParamsIR));
  CHECK(R.Failure == FailureKind::InvalidLaunch);
  CHECK(R.Message == "launch 0 recorded 4 argument slots (8 bytes each, the "
                     "return value's last), but the kernel takes 3 "
                     "parameters and returns void (3 slots)");

  Candidate BadPipeline = saxpy();
  BadPipeline.Pipeline = "function(no-such-pass)";
  R = evaluate(*S, BadPipeline);
  CHECK(R.Failure == FailureKind::CompileError);
  CHECK(R.Message.find("no-such-pass") != std::string::npos);

  Candidate Block = saxpy();
  Block.Block = Dim3{32, 1, 1};
  CHECK(evaluate(*S, Block).Failure == FailureKind::InvalidLaunch);

  Candidate Missing = saxpy();
  Missing.Kernel = "saxpi";
  auto E = S->evaluate(Missing);
  REQUIRE_FALSE(E);
  CHECK(E.error().message() == "the capture has no kernel 'saxpi'");
  requirePasses(*S, saxpy());
  CHECK(S->starts() == 1);
}

TEST_CASE("replay server: poisoning catches an output left unwritten") {
  auto S = client(fixture("scale"));
  Candidate C;
  C.Kernel = "scale";
  C.Launches = {0};
  C.Repetitions = 3;
  CandidateResult R = evaluate(*S, C);
  REQUIRE(R.Verified);
  CHECK(R.Poisoned); // scale only writes out: auto poisons it
  // A variant that skips elements 100..149, which already held the right
  // values before the call: it passes only when not poisoned.
  std::string Lazy = R"(
define void @scale(i32 %n, float %a, ptr %x, ptr %out) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %next ]
  %skip1 = icmp sge i32 %i, 100
  %skip2 = icmp slt i32 %i, 150
  %skip = and i1 %skip1, %skip2
  br i1 %skip, label %next, label %body
body:
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds float, ptr %x, i64 %idx
  %vx = load float, ptr %px
  %m = fmul float %a, %vx
  %po = getelementptr inbounds float, ptr %out, i64 %idx
  store float %m, ptr %po
  br label %next
next:
  %inext = add nsw i32 %i, 1
  %c = icmp slt i32 %inext, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)";
  Candidate V = C;
  V.Code = CodeKind::Bitcode;
  V.Image = *testing::bitcodeFromIR(Lazy);
  R = evaluate(*S, V);
  CHECK(R.Failure == FailureKind::WrongResult);
  CHECK(R.Message.find("region 'out'") != std::string::npos);
  V.Verify.Poison = PoisonMode::Off;
  R = evaluate(*S, V);
  CHECK(R.Verified);
  CHECK_FALSE(R.Poisoned);
}

TEST_CASE("replay server: return values and globals") {
  auto Dot = client(fixture("dot"));
  Candidate C;
  C.Kernel = "dot";
  C.Launches = {0};
  C.Repetitions = 2;
  CHECK(evaluate(*Dot, C).Verified);
  auto Bump = client(fixture("global"));
  C.Kernel = "bump";
  CandidateResult R = evaluate(*Bump, C);
  INFO(R.Message);
  CHECK(R.Verified);
}

TEST_CASE("replay server: open errors are errors") {
  ServerOptions O;
  O.Command = {R3_BINARY, "__replay-server"};
  O.CapturePath = tempPath("missing.h5");
  auto C = ServerClient::create(O);
  REQUIRE_FALSE(C);
  CHECK(C.error().message().find("missing.h5") != std::string::npos);
  // Without a GPU, a CUDA capture's server says why it cannot open one.
  if (!fs::exists("/dev/nvidia0")) {
    O.CapturePath = fixture("cuda");
    C = ServerClient::create(O);
    REQUIRE_FALSE(C);
    const std::string &M = C.error().message();
    CHECK(M.find("cuda.h5: ") != std::string::npos);
    CHECK((M.find("no CUDA driver") != std::string::npos ||
           M.find("cuInit") != std::string::npos ||
           M.find("no CUDA device") != std::string::npos ||
           M.find("without the CUDA backend") != std::string::npos));
  }
  O.CapturePath = fixture("unmappable");
  C = ServerClient::create(O);
  REQUIRE_FALSE(C);
  CHECK(C.error().message().find(
            "cannot map launch 0 of 'saxpy', region 'y' (heap "
            "0xffffffffff600000 +4000) at its recorded address") !=
        std::string::npos);
}

TEST_CASE("replay protocol: a candidate and a result survive encoding") {
  Candidate C = saxpy(3);
  C.Code = CodeKind::Bitcode;
  C.Pipeline = "default<O1>";
  C.Block = Dim3{32, 4, 1};
  C.Verify.Tolerance = ToleranceKind::Ulp;
  C.Verify.Value = 4;
  C.Verify.Type = ElementType::F64;
  C.Verify.Poison = PoisonMode::Off;
  auto Back = decodeCandidate(encodeCandidate(C).data(), {7, 8, 9});
  REQUIRE(Back);
  CHECK(Back->Kernel == "saxpy");
  CHECK(Back->Launches == std::vector<uint32_t>{3});
  CHECK(Back->Image == std::vector<uint8_t>{7, 8, 9});
  CHECK(Back->Pipeline == "default<O1>");
  CHECK(Back->Block == C.Block);
  CHECK_FALSE(Back->Grid.has_value());
  CHECK(Back->Verify.Tolerance == ToleranceKind::Ulp);
  CHECK(Back->Verify.Type == ElementType::F64);
  CHECK(Back->Verify.Poison == PoisonMode::Off);

  CandidateResult R = failedResult(FailureKind::Timeout, "timeout: slow");
  R.TimesNs = {1, 2, 3};
  R.Registers = 40;
  auto RB = decodeResult(encode(R).data());
  REQUIRE(RB);
  CHECK(RB->Failure == FailureKind::Timeout);
  CHECK(RB->Message == "timeout: slow");
  CHECK(RB->TimesNs == R.TimesNs);
  CHECK(RB->Registers == 40);
  CHECK_FALSE(RB->Spills.has_value());

  auto Short = encodeCandidate(C).data();
  Short.pop_back();
  CHECK_FALSE(decodeCandidate(Short, {}));
  CHECK(std::string(failureKindName(FailureKind::WrongResult)) ==
        "wrong_result");
  CHECK(parseFailureKind("compile_error") == FailureKind::CompileError);
}

TEST_CASE("region map: page ranges are aligned and merged") {
  std::vector<MappedSpan> S = {{0x10010, 0x20, "a"},
                               {0x10ff0, 0x20, "b"}, // into the next page
                               {0x12000, 0x1000, "c"},
                               {0x20000, 0, "empty"},
                               {0x30004, 4, "d"}};
  auto R = pageRanges(S);
  REQUIRE(R.size() == 2);
  CHECK(R[0].Begin == 0x10000);
  CHECK(R[0].End == 0x13000); // a, b and the adjacent c merged
  CHECK(R[1].Begin == 0x30000);
  CHECK(R[1].End == 0x31000);
}

TEST_CASE("region map: the slack is what the pages hold beyond the spans") {
  const uint64_t P = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t B = 0x40000 * P;
  std::vector<MappedSpan> S = {{B + 0x10, 0x20, "a"},
                               {B + 0x20, 0x40, "overlapping a"},
                               {B + 0x100, 0x10, "b"},
                               {B + 5 * P, P, "a whole page"},
                               {B + 9 * P + 8, 0, "empty"}};
  auto Slack = slackRanges(S);
  REQUIRE(Slack.size() == 3);
  CHECK(Slack[0].Begin == B); // before a
  CHECK(Slack[0].End == B + 0x10);
  CHECK(Slack[1].Begin == B + 0x60); // between a (with its overlap) and b
  CHECK(Slack[1].End == B + 0x100);
  CHECK(Slack[2].Begin == B + 0x110); // after b to its page's end
  CHECK(Slack[2].End == B + P);
  CHECK(slackRanges(std::vector<MappedSpan>{}).empty());
}

TEST_CASE("machine: a thread or a child process shows in the task count") {
  auto Before = countTasks();
  REQUIRE(Before); // /proc is mounted wherever the tests run
  CHECK(Before->Threads >= 1);
  std::atomic<bool> Stop = false;
  std::thread T([&] {
    while (!Stop)
      std::this_thread::yield();
  });
  auto During = countTasks();
  Stop = true;
  T.join();
  REQUIRE(During);
  CHECK(During->Threads == Before->Threads + 1);
  pid_t Child = ::fork();
  if (Child == 0)
    ::_exit(0);
  REQUIRE(Child > 0);
  auto WithChild = countTasks(); // a zombie until reaped, still a child
  int Status = 0;
  ::waitpid(Child, &Status, 0);
  REQUIRE(WithChild);
  if (::access("/proc/thread-self/children", R_OK) == 0)
    CHECK(WithChild->Children == Before->Children + 1);
  CHECK(countTasks() == Before);
}

TEST_CASE("region map: a taken range is named precisely") {
  const size_t Page = ::sysconf(_SC_PAGESIZE);
  void *Mine =
      ::mmap(nullptr, 4 * Page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(Mine != MAP_FAILED);
  uint64_t Base = reinterpret_cast<uint64_t>(Mine);
  std::vector<MappedSpan> S = {{Base + Page + 8, 100, "region 'y'"}};
  auto A = AddressReservation::reserve(S);
  REQUIRE_FALSE(A);
  char Want[128];
  std::snprintf(Want, sizeof(Want),
                "cannot map region 'y' at its recorded address: the range "
                "0x%lx-0x%lx is already in use in the replay server",
                static_cast<unsigned long>(Base + Page),
                static_cast<unsigned long>(Base + 2 * Page));
  CHECK(A.error().message() == Want);
  ::munmap(Mine, 4 * Page);

  // Free now: reserve, commit (zeroed, writable), decommit.
  auto B = AddressReservation::reserve(S);
  REQUIRE(B);
  REQUIRE_FALSE((*B)->commit(S));
  auto *P = reinterpret_cast<volatile uint8_t *>(Base + Page + 8);
  CHECK(*P == 0);
  *P = 42;
  (*B)->decommitAll();
  REQUIRE_FALSE((*B)->commit(S));
  CHECK(*P == 0); // fresh pages again
}

TEST_CASE("sandbox: writes outside the scratch directory are refused") {
  std::string Scratch = tempPath("scratch");
  fs::create_directories(Scratch);
  std::string Outside = tempPath("outside.txt");
  pid_t Child = ::fork();
  if (Child == 0) {
    auto S = enterSandbox({Scratch, 0, 60});
    if (!S)
      ::_exit(10);
    int In = ::open("inside.txt", O_CREAT | O_WRONLY, 0644); // cwd: scratch
    int Out = ::open(Outside.c_str(), O_CREAT | O_WRONLY, 0644);
    int Read = ::open("/proc/self/status", O_RDONLY);
    if (*S == "rlimits")
      ::_exit(In >= 0 && Read >= 0 ? 20 : 11);
    ::_exit(In >= 0 && Out < 0 && Read >= 0 ? 0 : 12);
  }
  int Status = 0;
  REQUIRE(::waitpid(Child, &Status, 0) == Child);
  REQUIRE(WIFEXITED(Status));
  if (landlockAbiVersion() > 0)
    CHECK(WEXITSTATUS(Status) == 0);
  else
    CHECK(WEXITSTATUS(Status) == 20);
  CHECK(fs::exists(Scratch + "/inside.txt"));
  if (landlockAbiVersion() > 0)
    CHECK_FALSE(fs::exists(Outside));
  fs::remove_all(Scratch);
  fs::remove(Outside);
}
