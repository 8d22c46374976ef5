// Host-backend fixture captures: kernels as LLVM IR text, inputs chosen so
// that every float operation is exact (small dyadic values), so the post-state
// computed here in C++ is what any correct compilation computes.
#include "HostCapture.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace r3::testing {

namespace {
const char *const Flags = R"(
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"r3.opt-level", i32 2}
)";

/// saxpy's loop with Body computing %s from %vx and %vy, and Extra before it.
std::string saxpyWith(const std::string &Signature, const std::string &Body,
                      const std::string &Extra = "") {
  return "define void @saxpy(" + Signature + R"() {
entry:
)" + Extra +
         R"(
  %cmp = icmp sgt i32 %n, 0
  br i1 %cmp, label %loop, label %exit
loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds float, ptr %x, i64 %idx
  %vx = load float, ptr %px
  %py = getelementptr inbounds float, ptr %y, i64 %idx
  %vy = load float, ptr %py
  %m = fmul float %a, %vx
)" + Body +
         R"(
  store float %s, ptr %py
  %inext = add nsw i32 %i, 1
  %c = icmp slt i32 %inext, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
)" + Flags;
}

const std::string SaxpySig = "i32 %n, float %a, ptr %x, ptr %y";
const std::string SaxpyText = saxpyWith(SaxpySig, "  %s = fadd float %m, %vy");
const std::string WrongText =
    saxpyWith(SaxpySig, "  %t = fadd float %m, %vy\n  %s = fadd float %t, 1.0");
const std::string NullText = saxpyWith(SaxpySig, "  %s = fadd float %m, %vy",
                                       "  store volatile float 0.0, ptr null");
const std::string LoopText = std::string(R"(
define void @saxpy(i32 %n, float %a, ptr %x, ptr %y) {
entry:
  br label %spin
spin:
  %v = load volatile i32, ptr %x
  br label %spin
}
)") + Flags;
const std::string ThreeText =
    saxpyWith("i32 %n, ptr %x, ptr %y", "  %s = fadd float %m, %vy",
              "  %a = fadd float 0.0, 2.0");

const char *const ScaleText = R"(
define void @scale(i32 %n, float %a, ptr %x, ptr %out) {
entry:
  %cmp = icmp sgt i32 %n, 0
  br i1 %cmp, label %loop, label %exit
loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds float, ptr %x, i64 %idx
  %vx = load float, ptr %px
  %m = fmul float %a, %vx
  %po = getelementptr inbounds float, ptr %out, i64 %idx
  store float %m, ptr %po
  %inext = add nsw i32 %i, 1
  %c = icmp slt i32 %inext, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"r3.opt-level", i32 2}
)";

const char *const DotText = R"(
define float @dot(ptr %x, ptr %y, i32 %n) {
entry:
  %cmp = icmp sgt i32 %n, 0
  br i1 %cmp, label %loop, label %exit
loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %sum = phi float [ 0.0, %entry ], [ %nsum, %loop ]
  %idx = sext i32 %i to i64
  %px = getelementptr inbounds float, ptr %x, i64 %idx
  %vx = load float, ptr %px
  %py = getelementptr inbounds float, ptr %y, i64 %idx
  %vy = load float, ptr %py
  %m = fmul float %vx, %vy
  %nsum = fadd float %sum, %m
  %inext = add nsw i32 %i, 1
  %c = icmp slt i32 %inext, %n
  br i1 %c, label %loop, label %exit
exit:
  %r = phi float [ 0.0, %entry ], [ %nsum, %loop ]
  ret float %r
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"r3.opt-level", i32 2}
)";

const char *const BumpText = R"(
@factor = external global float
@calls = external global i32
define void @bump(ptr %y, i32 %n) {
entry:
  %f = load float, ptr @factor
  %k = load i32, ptr @calls
  %k1 = add i32 %k, 1
  store i32 %k1, ptr @calls
  %cmp = icmp sgt i32 %n, 0
  br i1 %cmp, label %loop, label %exit
loop:
  %i = phi i32 [ 0, %entry ], [ %inext, %loop ]
  %idx = sext i32 %i to i64
  %py = getelementptr inbounds float, ptr %y, i64 %idx
  %vy = load float, ptr %py
  %m = fmul float %vy, %f
  store float %m, ptr %py
  %inext = add nsw i32 %i, 1
  %c = icmp slt i32 %inext, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"r3.opt-level", i32 2}
)";

struct FixtureRegion {
  uint64_t Base = 0;
  std::string Name;
  RegionKind Kind = RegionKind::Heap;
  std::vector<uint8_t> Pre, Post; ///< Post empty: unchanged
};

struct FixtureLaunch {
  std::vector<uint64_t> Slots;
  std::vector<FixtureRegion> Regions;
};

struct Fixture {
  std::string Kernel;
  std::string IR;
  std::vector<uint64_t> ParamSizes;
  std::vector<GlobalInfo> Globals;
  std::vector<FixtureLaunch> Launches;
  Backend Source = Backend::Host;
};

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &V) {
  std::vector<uint8_t> B(V.size() * sizeof(T));
  std::memcpy(B.data(), V.data(), B.size());
  return B;
}

uint64_t slot(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, 4);
  return Bits;
}

uint64_t slot(int32_t I) { return static_cast<uint32_t>(I); }

Error writeFixture(const std::string &Path, const Fixture &F) {
  CaptureHeader H;
  H.Source = F.Source;
  H.Device = {"host (test fixture)", 0, 0, 0, 0};
  H.CommandLine = {"./fixture", F.Kernel};
  auto W = CaptureWriter::create(Path, H);
  if (!W)
    return W.takeError();
  std::vector<uint8_t> Code;
  R3_TRY(moveInto(bitcodeFromIR(F.IR), Code));
  auto M = (*W)->addModule(ModuleKind::Bitcode, Code);
  if (!M)
    return M.takeError();
  KernelInfo K;
  K.Name = F.Kernel;
  K.Module = *M;
  for (size_t I = 0; I < F.ParamSizes.size(); ++I)
    K.Params.push_back({8 * I, F.ParamSizes[I]});
  K.Globals = F.Globals;
  auto KI = (*W)->addKernel(K);
  if (!KI)
    return KI.takeError();
  for (size_t L = 0; L < F.Launches.size(); ++L) {
    LaunchInfo Info;
    Info.Kernel = *KI;
    Info.Ordinal = L;
    Info.Params = bytesOf(F.Launches[L].Slots);
    auto LI = (*W)->beginLaunch(Info);
    if (!LI)
      return LI.takeError();
    for (const FixtureRegion &R : F.Launches[L].Regions) {
      RegionInfo Reg{R.Base, R.Pre.size(), R.Kind, R.Name, !R.Post.empty()};
      auto RI = (*W)->addRegion(*LI, Reg, bytesFrom(R.Pre));
      if (!RI)
        return RI.takeError();
      if (!R.Post.empty())
        R3_TRY((*W)->addChangedRegion(*LI, *RI, bytesFrom(R.Post)));
    }
  }
  return (*W)->finish();
}

FixtureLaunch saxpyLaunch(int32_t N, float A, uint64_t YBase, float Shift) {
  std::vector<float> X(N), Y(N), Post(N);
  for (int32_t I = 0; I < N; ++I) {
    X[I] = (I % 13) * 0.5f + Shift;
    Y[I] = (I % 7) * 0.25f;
    Post[I] = A * X[I] + Y[I];
  }
  FixtureLaunch L;
  L.Slots = {slot(N), slot(A), SaxpyX, YBase};
  L.Regions = {{SaxpyX, "x", RegionKind::Heap, bytesOf(X), {}},
               {YBase, "y", RegionKind::Heap, bytesOf(Y), bytesOf(Post)}};
  return L;
}

Fixture saxpyFixture(uint64_t YBase) {
  Fixture F{"saxpy", SaxpyText, {4, 4, 8, 8}, {}, {}, Backend::Host};
  F.Launches = {saxpyLaunch(1000, 2.0f, YBase, 0),
                saxpyLaunch(500, -1.5f, YBase, 1)};
  return F;
}

Fixture scaleFixture() {
  const int32_t N = 256;
  std::vector<float> X(N), Out(N, 0.0f), Post(N);
  for (int32_t I = 0; I < N; ++I) {
    X[I] = (I % 9) * 0.5f + 1;
    Post[I] = 4.0f * X[I];
    if (I >= 100 && I < 150)
      Out[I] = Post[I]; // already right before the call
  }
  Fixture F{"scale", ScaleText, {4, 4, 8, 8}, {}, {}, Backend::Host};
  FixtureLaunch L;
  L.Slots = {slot(N), slot(4.0f), SaxpyX, SaxpyY};
  L.Regions = {{SaxpyX, "x", RegionKind::Heap, bytesOf(X), {}},
               {SaxpyY, "out", RegionKind::Heap, bytesOf(Out), bytesOf(Post)}};
  F.Launches = {L};
  return F;
}

/// One launch of scale: out (at OutBase) = 4 * x (at XBase).
FixtureLaunch scaleLaunch(const std::vector<float> &X, uint64_t XBase,
                          uint64_t OutBase) {
  std::vector<float> Out(X.size(), 0.0f), Post(X.size());
  for (size_t I = 0; I < X.size(); ++I)
    Post[I] = 4.0f * X[I];
  FixtureLaunch L;
  L.Slots = {slot(static_cast<int32_t>(X.size())), slot(4.0f), XBase, OutBase};
  L.Regions = {{XBase, "x", RegionKind::Heap, bytesOf(X), {}},
               {OutBase, "out", RegionKind::Heap, bytesOf(Out), bytesOf(Post)}};
  return L;
}

/// scale twice, the second launch reading the first one's output from a
/// copy the application made at ChainCopy: the second launch's input holds
/// the first launch's recorded post-state.
Fixture chainFixture() {
  std::vector<float> X(256), Y(256);
  for (size_t I = 0; I < X.size(); ++I) {
    X[I] = (I % 9) * 0.5f + 1;
    Y[I] = 4.0f * X[I];
  }
  Fixture F{"scale", ScaleText, {4, 4, 8, 8}, {}, {}, Backend::Host};
  F.Launches = {scaleLaunch(X, SaxpyX, SaxpyY),
                scaleLaunch(Y, ChainCopy, ChainCopy + 0x2000)};
  return F;
}

Fixture dotFixture() {
  const int32_t N = 300;
  std::vector<float> X(N), Y(N);
  float Sum = 0;
  for (int32_t I = 0; I < N; ++I) {
    X[I] = (I % 7) * 0.5f;
    Y[I] = (I % 5) * 0.25f;
    Sum = Sum + X[I] * Y[I];
  }
  Fixture F{"dot", DotText, {8, 8, 4}, {}, {}, Backend::Host};
  FixtureLaunch L;
  L.Slots = {SaxpyX, SaxpyY, slot(N), slot(Sum)};
  L.Regions = {{SaxpyX, "x", RegionKind::Heap, bytesOf(X), {}},
               {SaxpyY, "y", RegionKind::Heap, bytesOf(Y), {}}};
  F.Launches = {L};
  return F;
}

Fixture globalFixture() {
  const int32_t N = 64;
  const uint64_t Factor = 0x4a0000020000ull, Calls = 0x4a0000020004ull;
  std::vector<float> Y(N), Post(N);
  for (int32_t I = 0; I < N; ++I) {
    Y[I] = I * 0.5f;
    Post[I] = Y[I] * 3.0f;
  }
  Fixture F{"bump", BumpText, {8, 4}, {}, {}, Backend::Host};
  F.Globals = {{"factor", Factor, 4}, {"calls", Calls, 4}};
  FixtureLaunch L;
  L.Slots = {SaxpyY, slot(N)};
  L.Regions = {{SaxpyY, "y", RegionKind::Heap, bytesOf(Y), bytesOf(Post)},
               {Factor,
                "factor",
                RegionKind::Global,
                bytesOf(std::vector<float>{3}),
                {}},
               {Calls, "calls", RegionKind::Global,
                bytesOf(std::vector<int32_t>{41}),
                bytesOf(std::vector<int32_t>{42})}};
  F.Launches = {L};
  return F;
}
} // namespace

const char *const SaxpyIR = SaxpyText.c_str();
const char *const SaxpyWrongIR = WrongText.c_str();
const char *const SaxpyNullIR = NullText.c_str();
const char *const SaxpyLoopIR = LoopText.c_str();
const char *const SaxpyThreeParamsIR = ThreeText.c_str();

Expected<std::vector<uint8_t>> bitcodeFromIR(const std::string &IR) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  auto M = llvm::parseAssemblyString(IR, Diag, Ctx);
  if (!M) {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    Diag.print("fixture", OS);
    return makeError("bad fixture IR: ", OS.str());
  }
  llvm::SmallVector<char, 0> Buf;
  llvm::raw_svector_ostream OS(Buf);
  llvm::WriteBitcodeToFile(*M, OS);
  return std::vector<uint8_t>(Buf.begin(), Buf.end());
}

Error makeHostCapture(const std::string &Kind, const std::string &Path) {
  if (Kind == "saxpy")
    return writeFixture(Path, saxpyFixture(SaxpyY));
  if (Kind == "scale")
    return writeFixture(Path, scaleFixture());
  if (Kind == "dot")
    return writeFixture(Path, dotFixture());
  if (Kind == "chain")
    return writeFixture(Path, chainFixture());
  if (Kind == "global")
    return writeFixture(Path, globalFixture());
  if (Kind == "unmappable")
    return writeFixture(Path, saxpyFixture(0xffffffffff600000ull));
  if (Kind == "cuda") {
    Fixture F = saxpyFixture(SaxpyY);
    F.Source = Backend::Cuda;
    return writeFixture(Path, F);
  }
  return makeError("unknown host fixture kind '", Kind, "'");
}

} // namespace r3::testing
