// Verification: does a candidate compute what the recorded launch computed?
//
// The rules (strict by default: a candidate that is fast and wrong must
// never win, so a tolerance is only what the user sets):
//  - Every region the original launch changed is an output: it must match the
//    recorded post-state. By default bitwise. With a tolerance the region is
//    read as an array of the element type the user names (f32 or f64; bytes
//    past the last whole element stay bitwise) and each element must be within
//    it: abs |got - expected| <= X; rel |got - expected| <= X * |expected| (so
//    a recorded 0 must be met exactly); ulp at most N representable values
//    apart (+0 and -0 are 0 apart). Equal values (infinities, signed zeros)
//    always pass. A NaN where the recorded value is a number never passes; a
//    NaN where a NaN was recorded passes whatever its payload; a number where
//    a NaN was recorded fails.
//  - Every region the original did not change must be unchanged, bitwise,
//    whatever the tolerance: a candidate that scribbles on its inputs is wrong
//    even when its outputs are right.
//  - A kernel's return value is an output too: bitwise, or with the tolerance
//    when it is a float and the user named a float element type.
//  - Poisoning (poisonOutputs) runs before the verification run: in every
//    region the original changed, the bytes from its first to its last
//    changed byte are set to 0xff. Poisoning only the bytes that changed (pre
//    != post) would catch nothing: a candidate that leaves such a byte
//    unwritten fails anyway. The span also covers outputs that the original
//    wrote with the value they already held, which only poisoning can catch;
//    bytes around the span stay, so a kernel writing a slice of a larger
//    allocation can still be poisoned. Kernels that read their outputs
//    (y += ...) cannot be poisoned: the replay server decides per launch
//    whether the recorded kernel itself still verifies poisoned
//    (PoisonMode::Auto). A poisoned launch is poisoned before every run, not
//    only the verification run, so that a candidate cannot tell that run
//    from the others by looking at its outputs.
//  - Not only the verification run is checked: a candidate that does the
//    work on its first call only, or when the clock says it is not being
//    timed, passes the verification run and then fails the check of a later
//    run (laterRunMessage). The host device checks every run; the CUDA
//    device, where each check copies the memory back, the last run and one
//    at random.
// Every mismatch is counted; the first few are described precisely enough to
// find the bug: region, element index, type, both values and the error.
#include "replay/Verify.h"

#include "replay/VerifyScan.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace r3 {

namespace {
template <typename F> std::string number(F V) {
  if (std::isnan(V))
    return "nan";
  char Buf[64];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), V);
  return std::string(Buf, R.ptr);
}

std::string hexByte(uint8_t B) {
  char Buf[8];
  std::snprintf(Buf, sizeof(Buf), "0x%02x", B);
  return Buf;
}

std::string hexValue(uint64_t V) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%" PRIx64, V);
  return Buf;
}

template <typename F> struct Traits;
template <> struct Traits<float> {
  using Bits = uint32_t;
  static constexpr const char *Name = "f32";
};
template <> struct Traits<double> {
  using Bits = uint64_t;
  static constexpr const char *Name = "f64";
};

/// Why Got is not close enough to Expected, or empty if it is: the verdict
/// is VerifyScan.h's (the GPU's kernel decides with the same functions),
/// the words are for the message.
template <typename F>
std::string elementError(F Expected, F Got, const VerifySettings &S) {
  using Bits = typename Traits<F>::Bits;
  Bits E, G;
  std::memcpy(&E, &Expected, sizeof(F));
  std::memcpy(&G, &Got, sizeof(F));
  uint32_t Rule = static_cast<uint32_t>(S.Tolerance);
  bool Close = sizeof(F) == 4 ? scan::close32(E, G, Rule, S.Value)
                              : scan::close64(E, G, Rule, S.Value);
  if (Close)
    return {};
  if (S.Tolerance == ToleranceKind::Exact)
    return "not bitwise equal";
  if (std::isnan(Got))
    return "a nan where a number was recorded";
  if (std::isnan(Expected))
    return "a number where a nan was recorded";
  double Diff = std::fabs(static_cast<double>(Got) - Expected);
  switch (S.Tolerance) {
  case ToleranceKind::Abs:
    return "abs error " + number(Diff) + " > " + number(S.Value);
  case ToleranceKind::Rel:
    return "rel error " +
           number(Diff / std::fabs(static_cast<double>(Expected))) + " > " +
           number(S.Value);
  case ToleranceKind::Ulp:
    return std::to_string(
               scan::ulpsApart(E, G, Bits(1) << (sizeof(Bits) * 8 - 1))) +
           " ulp > " + number(S.Value);
  case ToleranceKind::Exact:
    break;
  }
  return "not bitwise equal";
}

const char *unchangedNote(RegionRole Role) {
  return Role == RegionRole::Unchanged
             ? " (the original left this region unchanged)"
             : "";
}

std::string byteText(uint64_t I, uint8_t E, uint8_t G, RegionRole Role) {
  return "byte " + std::to_string(I) + ": expected " + hexByte(E) + ", got " +
         hexByte(G) + unchangedNote(Role);
}

template <typename F>
std::string elementText(uint64_t I, F E, F G, const std::string &Why) {
  return "element " + std::to_string(I) + " (" + Traits<F>::Name +
         "): expected " + number(E) + ", got " + number(G) + " (" + Why + ")";
}
} // namespace

std::string regionLabel(const RegionInfo &R, uint32_t Index) {
  std::string Who = R.Name.empty() ? "region " + std::to_string(Index)
                                   : "region '" + R.Name + "'";
  return Who + " (" + regionKindName(R.Kind) + " " + hexValue(R.Base) + " +" +
         std::to_string(R.Size) + ")";
}

std::string VerifyReport::message() const {
  if (passed())
    return {};
  std::string M = std::to_string(Mismatches) +
                  (Mismatches == 1 ? " mismatch in " : " mismatches in ") +
                  std::to_string(RegionsWrong) +
                  (RegionsWrong == 1 ? " output: " : " outputs: ");
  for (size_t I = 0; I < First.size(); ++I) {
    bool Same = I > 0 && Where[I] == Where[I - 1];
    M += (I ? "; " : "") +
         (Same ? First[I].substr(Where[I].size() + 2) : First[I]);
  }
  if (Mismatches > First.size())
    M += "; and " + std::to_string(Mismatches - First.size()) + " more";
  return M;
}

void Verifier::describe(const std::string &Where, const std::string &What) {
  ++Report.Mismatches;
  note(Where, What);
}

void Verifier::note(const std::string &Where, const std::string &What) {
  if (Report.First.size() < MaxDescribed) {
    Report.First.push_back(Where + ": " + What);
    Report.Where.push_back(Where);
  }
}

void Verifier::checkBytes(const RegionCheck &R, size_t From) {
  for (size_t I = From; I < R.Expected.size(); ++I)
    if (R.Expected[I] != R.Actual[I])
      describe(R.Label, byteText(I, R.Expected[I], R.Actual[I], R.Role));
}

template <typename F> void Verifier::checkElements(const RegionCheck &R) {
  size_t N = R.Expected.size() / sizeof(F);
  for (size_t I = 0; I < N; ++I) {
    F E, G;
    std::memcpy(&E, R.Expected.data() + I * sizeof(F), sizeof(F));
    std::memcpy(&G, R.Actual.data() + I * sizeof(F), sizeof(F));
    std::string Why = elementError(E, G, Settings);
    if (!Why.empty())
      describe(R.Label, elementText(I, E, G, Why));
  }
  checkBytes(R, N * sizeof(F));
}

void Verifier::countRegion(uint64_t Mismatches) {
  Report.Mismatches += Mismatches;
  if (Mismatches)
    ++Report.RegionsWrong;
}

bool Verifier::describing() const { return Report.First.size() < MaxDescribed; }

void Verifier::describeUnit(const std::string &Label, RegionRole Role,
                            uint32_t Unit, uint64_t Index,
                            std::span<const uint8_t> Expected,
                            std::span<const uint8_t> Actual) {
  if (Unit == scan::F32 && Expected.size() == 4 && Actual.size() == 4) {
    float E, G;
    std::memcpy(&E, Expected.data(), 4);
    std::memcpy(&G, Actual.data(), 4);
    note(Label, elementText(Index, E, G, elementError(E, G, Settings)));
  } else if (Unit == scan::F64 && Expected.size() == 8 && Actual.size() == 8) {
    double E, G;
    std::memcpy(&E, Expected.data(), 8);
    std::memcpy(&G, Actual.data(), 8);
    note(Label, elementText(Index, E, G, elementError(E, G, Settings)));
  } else if (!Expected.empty() && !Actual.empty()) {
    note(Label, byteText(Index, Expected[0], Actual[0], Role));
  }
}

void Verifier::checkRegion(const RegionCheck &R) {
  uint64_t Before = Report.Mismatches;
  if (R.Expected.size() != R.Actual.size()) {
    describe(R.Label, "expected " + std::to_string(R.Expected.size()) +
                          " bytes, got " + std::to_string(R.Actual.size()));
  } else if (R.Expected.empty() || // an empty span's data() may be null
             std::memcmp(R.Expected.data(), R.Actual.data(),
                         R.Expected.size()) == 0) {
    return;
  } else if (R.Role == RegionRole::Unchanged ||
             Settings.Type == ElementType::Bytes) {
    checkBytes(R, 0);
  } else if (Settings.Type == ElementType::F32) {
    checkElements<float>(R);
  } else {
    checkElements<double>(R);
  }
  if (Report.Mismatches != Before)
    ++Report.RegionsWrong;
}

void Verifier::checkReturn(ValueType T, unsigned Size, uint64_t Expected,
                           uint64_t Actual) {
  uint64_t Mask = Size >= 8 ? ~0ull : (1ull << (8 * Size)) - 1;
  Expected &= Mask;
  Actual &= Mask;
  std::string Why, Where = "return value", What;
  if (T == ValueType::F32 && Settings.Type != ElementType::Bytes) {
    float E, G;
    uint32_t EB = static_cast<uint32_t>(Expected),
             GB = static_cast<uint32_t>(Actual);
    std::memcpy(&E, &EB, 4);
    std::memcpy(&G, &GB, 4);
    Why = elementError(E, G, Settings);
    Where += " (f32)";
    What = "expected " + number(E) + ", got " + number(G);
  } else if (T == ValueType::F64 && Settings.Type != ElementType::Bytes) {
    double E, G;
    std::memcpy(&E, &Expected, 8);
    std::memcpy(&G, &Actual, 8);
    Why = elementError(E, G, Settings);
    Where += " (f64)";
    What = "expected " + number(E) + ", got " + number(G);
  } else if (Expected != Actual) {
    Why = "not bitwise equal";
    What = "expected " + hexValue(Expected) + ", got " + hexValue(Actual);
  }
  if (Why.empty())
    return;
  describe(Where, What + " (" + Why + ")");
  ++Report.RegionsWrong;
}

std::string runName(uint32_t Index, uint32_t Warmup) {
  return Index < Warmup ? "warm-up run " + std::to_string(Index + 1)
                        : "timed run " + std::to_string(Index - Warmup + 1);
}

std::string laterRunMessage(uint64_t Launch, const std::string &Run,
                            const std::string &Checked, const VerifyReport &R) {
  return "launch " + std::to_string(Launch) + ": " + Run +
         " gave a different result than the verification run, which passed (" +
         Checked + "): " + R.message();
}

void poisonOutputs(std::span<uint8_t> Live, std::span<const uint8_t> Pre,
                   std::span<const uint8_t> Post) {
  size_t N = std::min({Live.size(), Pre.size(), Post.size()});
  size_t First = 0;
  while (First < N && Pre[First] == Post[First])
    ++First;
  if (First == N)
    return;
  size_t Last = N - 1;
  while (Pre[Last] == Post[Last])
    --Last;
  std::memset(Live.data() + First, 0xff, Last - First + 1);
}

Error parseTolerance(const std::string &Text, VerifySettings &S) {
  if (Text == "exact") {
    S.Tolerance = ToleranceKind::Exact;
    S.Value = 0;
    return Error::success();
  }
  auto Colon = Text.find(':');
  std::string Kind = Text.substr(0, Colon);
  std::string Value = Colon == std::string::npos ? "" : Text.substr(Colon + 1);
  const char *Expect =
      "expected exact, abs:X, rel:X or ulp:N (X a non-negative number, N a "
      "non-negative integer)";
  ToleranceKind K;
  if (Kind == "abs")
    K = ToleranceKind::Abs;
  else if (Kind == "rel")
    K = ToleranceKind::Rel;
  else if (Kind == "ulp")
    K = ToleranceKind::Ulp;
  else
    return makeError("tolerance '", Text, "': ", Expect);
  double V = 0;
  auto R = std::from_chars(Value.data(), Value.data() + Value.size(), V);
  bool Bad = Value.empty() || R.ec != std::errc() ||
             R.ptr != Value.data() + Value.size() || !(V >= 0) ||
             std::isinf(V) || (K == ToleranceKind::Ulp && V != std::floor(V));
  if (Bad)
    return makeError("tolerance '", Text, "': ", Expect);
  S.Tolerance = K;
  S.Value = V;
  return Error::success();
}

} // namespace r3
