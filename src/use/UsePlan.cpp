// The plan and report files of `r3 run --use` (UsePlan.h).
#include "use/UsePlan.h"

#include <cstdint>

#include "support/FileUtil.h"
#include "support/StringUtil.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace r3::use {

namespace {
constexpr const char *PlanMagic = "r3-use-plan 1";
constexpr const char *ReportMagic = "r3-use-report 1";

/// A value as one line: newlines would split it.
std::string oneLine(std::string S) {
  for (char &C : S)
    if (C == '\n' || C == '\r')
      C = ' ';
  return S;
}

std::string number(double V) {
  char Buf[40];
  std::snprintf(Buf, sizeof Buf, "%.17g", V);
  return Buf;
}

/// Reads "key value" lines, with the place of each for errors.
class Lines {
public:
  Lines(std::string_view Text, const std::string &Where)
      : Text(Text), Where(Where) {}

  /// The next non-empty line, split at its first space; false at the end.
  bool next() {
    while (Pos < Text.size()) {
      size_t End = Text.find('\n', Pos);
      if (End == std::string_view::npos)
        End = Text.size();
      std::string_view L = Text.substr(Pos, End - Pos);
      Pos = End + 1;
      ++Number;
      if (L.empty())
        continue;
      size_t Space = L.find(' ');
      Key = std::string(L.substr(0, Space));
      Value = Space == std::string_view::npos
                  ? std::string()
                  : std::string(L.substr(Space + 1));
      Line = std::string(L);
      return true;
    }
    return false;
  }

  Error error(const std::string &What) const {
    return makeError(Where, ":", Number, ": ", What);
  }

  Expected<uint64_t> unsignedValue() const {
    if (auto V = parseUnsigned(Value))
      return *V;
    return error("'" + Key + "' needs a non-negative integer, got '" + Value +
                 "'");
  }

  Expected<int64_t> signedValue() const {
    auto V = parseInteger(Value, INT64_MIN, INT64_MAX);
    if (!V)
      return error("'" + Key + "' needs an integer: " + V.error().message());
    return *V;
  }

  /// Count numbers separated by spaces.
  Expected<std::vector<double>> numbers(size_t Count) const {
    std::vector<std::string> Words = split(Value, ' ');
    std::vector<double> Out;
    for (const std::string &W : Words) {
      auto V = parseDouble(W);
      if (!V)
        return error("'" + Key + "' needs " + std::to_string(Count) +
                     " numbers: " + V.error().message());
      Out.push_back(*V);
    }
    if (Out.size() != Count || Words.size() != Count)
      return error("'" + Key + "' needs " + std::to_string(Count) +
                   " numbers, got '" + Value + "'");
    return Out;
  }

  /// A grid or block: three whole counts, each at least Least.
  Expected<Dim3> dim3(uint32_t Least) const {
    std::vector<double> V;
    R3_TRY(moveInto(numbers(3), V));
    Dim3 D;
    for (size_t I = 0; I < 3; ++I) {
      if (V[I] != std::floor(V[I]) || V[I] < Least || V[I] > UINT32_MAX)
        return error("'" + Key + "' takes three " +
                     (Least ? "positive" : "non-negative") + " numbers, got '" +
                     Value + "'");
      D[I] = static_cast<uint32_t>(V[I]);
    }
    return D;
  }

  std::string_view Text;
  std::string Where, Key, Value, Line;
  size_t Pos = 0, Number = 0;
};

/// "KEY X Y Z\n", as Lines::dim3 reads it.
std::string dimLine(const char *Key, const Dim3 &D) {
  return std::string(Key) + " " + std::to_string(D[0]) + " " +
         std::to_string(D[1]) + " " + std::to_string(D[2]) + "\n";
}

Error expectMagic(Lines &L, const char *Magic, const char *What) {
  if (!L.next() || L.Line != Magic)
    return L.error(std::string("not ") + What + " (expected '" + Magic +
                   "' first)");
  return Error::success();
}

Error kernelField(Lines &L, KernelPlan &K) {
  const std::string &Key = L.Key;
  if (Key == "module")
    K.ModuleSha256 = L.Value;
  else if (Key == "artifact")
    K.Artifact = L.Value;
  else if (Key == "pipeline")
    K.Pipeline = L.Value;
  else if (Key == "codegen-opt") {
    int64_t V;
    R3_TRY(moveInto(L.signedValue(), V));
    K.CodegenOpt = static_cast<int>(V);
  } else if (Key == "recorded-opt") {
    int64_t V;
    R3_TRY(moveInto(L.signedValue(), V));
    K.RecordedOpt = static_cast<int>(V);
  } else if (Key == "block") {
    R3_TRY(moveInto(L.dim3(0), K.Block));
  } else if (Key == "grid-rule")
    K.GridRule = L.Value;
  else if (Key == "grid-x" || Key == "grid-per-sm") {
    int64_t V;
    R3_TRY(moveInto(L.signedValue(), V));
    if (V < 0 || V > INT32_MAX)
      return L.error("'" + Key + "' must be a count of blocks");
    (Key == "grid-x" ? K.GridX : K.GridPerSm) = static_cast<uint32_t>(V);
  } else if (Key == "dynamic-shared")
    R3_TRY(moveInto(L.signedValue(), K.DynamicShared));
  else if (Key == "cache")
    K.CachePreference = L.Value;
  else if (Key == "tolerance") {
    std::vector<double> V;
    R3_TRY(moveInto(L.numbers(3), V));
    K.Tolerance = static_cast<int>(V[0]);
    K.ToleranceValue = V[1];
    K.ElementType = static_cast<int>(V[2]);
  } else if (Key == "speedup") {
    std::vector<double> V;
    R3_TRY(moveInto(L.numbers(3), V));
    K.Speedup = V[0];
    K.SpeedupLo = V[1];
    K.SpeedupHi = V[2];
  } else
    return L.error("unknown key '" + Key + "' in a kernel");
  return Error::success();
}

} // namespace

const KernelPlan *Plan::find(std::string_view Name) const {
  for (const KernelPlan &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

std::string encodePlan(const Plan &P) {
  std::string S = std::string(PlanMagic) + "\n";
  S += "verify-launches " + std::to_string(P.VerifyLaunches) + "\n";
  S += std::string("time-kernels ") + (P.TimeKernels ? "1" : "0") + "\n";
  S += std::string("keep-original ") + (P.KeepOriginal ? "1" : "0") + "\n";
  for (const KernelPlan &K : P.Kernels) {
    S += "kernel " + oneLine(K.Name) + "\n";
    S += "module " + oneLine(K.ModuleSha256) + "\n";
    if (!K.Artifact.empty())
      S += "artifact " + oneLine(K.Artifact) + "\n";
    if (!K.Pipeline.empty())
      S += "pipeline " + oneLine(K.Pipeline) + "\n";
    S += "codegen-opt " + std::to_string(K.CodegenOpt) + "\n";
    S += "recorded-opt " + std::to_string(K.RecordedOpt) + "\n";
    S += dimLine("block", K.Block);
    if (!K.GridRule.empty())
      S += "grid-rule " + oneLine(K.GridRule) + "\n";
    if (K.GridX)
      S += "grid-x " + std::to_string(K.GridX) + "\n";
    if (K.GridPerSm)
      S += "grid-per-sm " + std::to_string(K.GridPerSm) + "\n";
    S += "dynamic-shared " + std::to_string(K.DynamicShared) + "\n";
    if (!K.CachePreference.empty())
      S += "cache " + oneLine(K.CachePreference) + "\n";
    S += "tolerance " + std::to_string(K.Tolerance) + " " +
         number(K.ToleranceValue) + " " + std::to_string(K.ElementType) + "\n";
    S += "speedup " + number(K.Speedup) + " " + number(K.SpeedupLo) + " " +
         number(K.SpeedupHi) + "\n";
    S += "end\n";
  }
  return S;
}

Expected<Plan> decodePlan(std::string_view Text, const std::string &Where) {
  Lines L(Text, Where);
  R3_TRY(expectMagic(L, PlanMagic, "an r3 run plan"));
  Plan P;
  KernelPlan *K = nullptr;
  while (L.next()) {
    if (L.Key == "end") {
      if (!K)
        return L.error("'end' outside a kernel");
      if (K->ModuleSha256.empty())
        return L.error("kernel '" + K->Name + "' names no module");
      K = nullptr;
    } else if (L.Key == "kernel") {
      if (K)
        return L.error("kernel '" + K->Name + "' has no 'end'");
      if (L.Value.empty())
        return L.error("'kernel' needs a name");
      if (P.find(L.Value))
        return L.error("kernel '" + L.Value + "' is planned twice");
      P.Kernels.push_back({});
      K = &P.Kernels.back();
      K->Name = L.Value;
    } else if (K) {
      R3_TRY(kernelField(L, *K));
    } else if (L.Key == "verify-launches") {
      R3_TRY(moveInto(L.unsignedValue(), P.VerifyLaunches));
    } else if (L.Key == "time-kernels" || L.Key == "keep-original") {
      uint64_t V = 0;
      R3_TRY(moveInto(L.unsignedValue(), V));
      if (V > 1)
        return L.error("'" + L.Key + "' is 0 or 1, got '" + L.Value + "'");
      (L.Key == "time-kernels" ? P.TimeKernels : P.KeepOriginal) = V == 1;
    } else {
      return L.error("unknown key '" + L.Key + "'");
    }
  }
  if (K)
    return L.error("kernel '" + K->Name + "' has no 'end'");
  return P;
}

Expected<Plan> readPlan(const std::string &Path) {
  std::string Text;
  R3_TRY(moveInto(readWholeFile(Path, "r3 run plan"), Text));
  return decodePlan(Text, Path);
}

const char *outcomeName(Outcome O) {
  switch (O) {
  case Outcome::Replaced:
    return "replaced";
  case Outcome::Refused:
    return "refused";
  case Outcome::Failed:
    return "failed";
  case Outcome::VerifyFailed:
    return "verify-failed";
  }
  return "?";
}

std::string changedKernelMessage(const std::string &Kernel,
                                 const std::string &What,
                                 const std::string &Hash,
                                 const std::string &Expected) {
  return "this application's '" + Kernel +
         "' is not the kernel the campaign tuned (its " + What +
         "'s SHA-256 is " +
         (Hash.empty() ? std::string("unknown") : Hash.substr(0, 12) + "...") +
         ", the capture's " + Expected.substr(0, 12) +
         "...): was the application rebuilt with a changed kernel? It was "
         "left alone";
}

void printMismatch(const std::string &Kernel, const std::string &Message) {
  std::fprintf(stderr,
               "r3 run: error: the tuned '%s' does not reproduce the "
               "original's outputs at %s; the application was stopped\n",
               Kernel.c_str(), Message.c_str());
}

std::string encodeReport(const ProcessReport &R) {
  std::string S = std::string(ReportMagic) + "\n";
  S += "pid " + std::to_string(R.Pid) + "\n";
  for (const KernelReport &K : R.Kernels) {
    S += "kernel " + oneLine(K.Name) + "\n";
    S += std::string("outcome ") + outcomeName(K.What) + "\n";
    S += "launches " + std::to_string(K.Launches) + "\n";
    S += "verified " + std::to_string(K.Verified) + "\n";
    S += "timed " + std::to_string(K.Timed) + "\n";
    S += "kernel-ns " + std::to_string(K.KernelNs) + "\n";
    if (!K.Message.empty())
      S += "message " + oneLine(K.Message) + "\n";
    if (K.Grid[0])
      S += dimLine("grid", K.Grid) + dimLine("block", K.Block);
    S += "end\n";
  }
  return S;
}

Expected<ProcessReport> decodeReport(std::string_view Text,
                                     const std::string &Where) {
  Lines L(Text, Where);
  R3_TRY(expectMagic(L, ReportMagic, "an r3 run report"));
  ProcessReport R;
  KernelReport *K = nullptr;
  while (L.next()) {
    if (L.Key == "pid" && !K) {
      R3_TRY(moveInto(L.unsignedValue(), R.Pid));
    } else if (L.Key == "kernel" && !K) {
      R.Kernels.push_back({});
      K = &R.Kernels.back();
      K->Name = L.Value;
    } else if (L.Key == "end" && K) {
      K = nullptr;
    } else if (K && L.Key == "outcome") {
      bool Known = false;
      for (Outcome O : {Outcome::Replaced, Outcome::Refused, Outcome::Failed,
                        Outcome::VerifyFailed})
        if (L.Value == outcomeName(O)) {
          K->What = O;
          Known = true;
        }
      if (!Known)
        return L.error("unknown outcome '" + L.Value + "'");
    } else if (K && L.Key == "launches") {
      R3_TRY(moveInto(L.unsignedValue(), K->Launches));
    } else if (K && L.Key == "verified") {
      R3_TRY(moveInto(L.unsignedValue(), K->Verified));
    } else if (K && L.Key == "timed") {
      R3_TRY(moveInto(L.unsignedValue(), K->Timed));
    } else if (K && L.Key == "kernel-ns") {
      R3_TRY(moveInto(L.unsignedValue(), K->KernelNs));
    } else if (K && L.Key == "message") {
      K->Message = L.Value;
    } else if (K && (L.Key == "grid" || L.Key == "block")) {
      R3_TRY(moveInto(L.dim3(1), L.Key == "grid" ? K->Grid : K->Block));
    } else {
      return L.error("unexpected '" + L.Key + "'");
    }
  }
  if (K)
    return L.error("kernel '" + K->Name + "' has no 'end'");
  return R;
}

Error writeReportFile(const std::string &Dir, uint64_t Pid,
                      const std::string &Text) {
  std::string Final = Dir + "/report." + std::to_string(Pid);
  std::string Temporary = Final + ".partial";
  int Fd =
      ::open(Temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Fd < 0)
    return errnoError(Temporary);
  size_t Done = 0;
  while (Done < Text.size()) {
    ssize_t N = ::write(Fd, Text.data() + Done, Text.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      Error E = errnoError(Temporary);
      ::close(Fd);
      return E;
    }
    Done += static_cast<size_t>(N);
  }
  if (::close(Fd) != 0 || ::rename(Temporary.c_str(), Final.c_str()) != 0)
    return errnoError(Final);
  return Error::success();
}

} // namespace r3::use
