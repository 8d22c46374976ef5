// The baseline and speedup rule (replay/Speedup.h) and the per-kernel
// summaries built on it (report/Summary.h): the baseline from rows or, in
// histories without rows, from evaluations; per-device baselines, the
// search's scale, the best time with baselines from one device and from
// several, ties, untimed results, the speedup's interval, the lineage.
#include "Catch.h"

#include "history/History.h"
#include "replay/Speedup.h"
#include "report/EndToEnd.h"
#include "report/Summary.h"

#include <filesystem>
#include <unistd.h>

using namespace r3;
using report::Estimate;
using report::KernelTimes;

namespace {
Estimate ms(double V) { return {V, V * 0.9, V * 1.1}; }
} // namespace

TEST_CASE("report: the speedup and its interval", "[report]") {
  auto S = report::speedupOf({2.0, 1.8, 2.2}, {1.0, 0.9, 1.25});
  REQUIRE(S);
  CHECK(S->Value == Approx(2.0));
  CHECK(S->Lo == Approx(1.8 / 1.25));
  CHECK(S->Hi == Approx(2.2 / 0.9));
  // An interval stored as unknown (0) leaves the speedup's unknown.
  auto NoCi = report::speedupOf({2.0, 0, 0}, {1.0, 0.9, 1.1});
  REQUIRE(NoCi);
  CHECK(NoCi->Value == Approx(2.0));
  CHECK_FALSE(NoCi->hasInterval());
  // An untimed baseline or best is no speedup.
  CHECK_FALSE(report::speedupOf({0, 0, 0}, {1, 1, 1}));
  CHECK_FALSE(report::speedupOf({1, 1, 1}, {0, 0, 0}));
}

TEST_CASE("report: a device's baseline is the median of its measurements",
          "[report]") {
  auto M =
      report::medianOf({{2.0, 1.9, 2.1}, {2.4, 2.3, 2.5}, {2.1, 2.0, 2.2}});
  REQUIRE(M);
  CHECK(M->Value == Approx(2.1));
  CHECK(M->Lo == Approx(2.0));
  CHECK(M->Hi == Approx(2.2));
  CHECK_FALSE(report::medianOf({}));
}

TEST_CASE("report: with one device the best is the lowest time", "[report]") {
  KernelTimes T;
  CHECK_FALSE(T.best());
  CHECK_FALSE(T.baseline());
  T.addBaselineRow("gpu", ms(2.0));
  T.addBaselineRow("gpu", ms(2.4));
  T.addBaselineRow("gpu", ms(2.1));
  T.addTime("gpu", ms(1.5), 1);
  T.addTime("gpu", ms(0), 2); // verified without timed runs: never counts
  T.addTime("gpu", ms(1.0), 3);
  T.addTime("gpu", ms(1.0), 4); // a tie: the first offered stays
  T.addTime("gpu", ms(1.2), 5);
  auto B = T.best();
  REQUIRE(B);
  CHECK(B->Id == 3);
  CHECK_FALSE(B->PerDevice);
  CHECK(T.baseline()->Value == Approx(2.1));
  CHECK(T.speedup()->Value == Approx(2.1));
  CHECK(T.comparable("gpu", 1.5) == 1.5);
  CHECK(T.scale("gpu") == 1);
  // A time from a device that measured no baseline compares as measured.
  T.addTime("other", ms(0.5), 6);
  CHECK(T.best()->Id == 6);
  CHECK(T.speedup()->Value == Approx(4.2));
}

TEST_CASE("report: without rows the baseline comes from baseline-level "
          "evaluations",
          "[report]") {
  KernelTimes T;
  T.addBaselineEvaluation("cpu", ms(0)); // untimed: not a measurement
  CHECK_FALSE(T.baseline());
  T.addBaselineEvaluation("cpu", ms(4.0));
  T.addTime("cpu", ms(4.0), 1);
  T.addTime("cpu", ms(3.2), 2);
  CHECK(T.baseline()->Value == Approx(4.0));
  CHECK(T.referenceDevice() == "cpu");
  CHECK(T.speedup()->Value == Approx(1.25));
  // Rows, once there are any, are the measurements (a live campaign writes
  // a row for the baseline-level evaluation too).
  T.addBaselineRow("cpu", ms(5.0));
  CHECK(T.baseline()->Value == Approx(5.0));
  CHECK(T.speedup()->Value == Approx(5.0 / 3.2));
}

TEST_CASE("report: with baselines from several devices each time is taken "
          "against its own device's",
          "[report]") {
  KernelTimes T;
  T.addBaselineRow("slow", ms(4.0)); // the first: the search's reference
  T.addBaselineRow("fast", ms(1.0));
  T.addBaselineRow("fast", ms(1.0));
  T.addTime("slow", ms(2.0), 1); // 2x
  T.addTime("fast", ms(0.8), 2); // 1.25x, though the faster time
  T.addTime("none", ms(0.5), 3); // no baseline of its own: not compared
  auto B = T.best();
  REQUIRE(B);
  CHECK(B->Id == 1);
  CHECK(B->PerDevice);
  CHECK(B->Device == "slow");
  CHECK(T.baseline()->Value == 4.0);
  CHECK(T.speedup()->Value == 2.0);
  CHECK(T.pooledBaseline()->Value == 1.0);
  // The search's scale: the reference device's baseline over the device's.
  CHECK(T.referenceDevice() == "slow");
  CHECK(*T.referenceBaselineMs() == 4.0);
  CHECK(T.scale("slow") == 1);
  CHECK(T.scale("fast") == 4.0);
  CHECK(T.scale("none") == 1);
  // Times as they compare with the report's baseline (the slow device's).
  CHECK(*T.comparable("fast", 0.8) == Approx(3.2));
  CHECK(*T.comparable("slow", 2.0) == 2.0);
  CHECK_FALSE(T.comparable("none", 0.5));
  // Equal speedups: the first offered.
  T.addTime("fast", ms(0.5), 4);
  CHECK(T.best()->Id == 1);
}

TEST_CASE("report: with several devices and no time to compare, the lowest "
          "time against the pooled baseline",
          "[report]") {
  KernelTimes T;
  T.addBaselineRow("a", ms(2.0));
  T.addBaselineRow("b", ms(4.0));
  T.addBaselineRow("b", ms(3.0));
  T.addTime("c", ms(1.5), 7);
  auto B = T.best();
  REQUIRE(B);
  CHECK(B->Id == 7);
  CHECK_FALSE(B->PerDevice);
  CHECK(T.baseline()->Value == Approx(3.0));
  CHECK(T.comparable("c", 1.5) == 1.5);
}

namespace {
/// A history in the temporary directory with one kernel, removed after.
struct TempHistory {
  std::string Path;
  std::unique_ptr<History> H;
  int64_t Kernel = 0, Variant = 0;
  int Serial = 0;
  explicit TempHistory(const std::string &Name)
      : Path((std::filesystem::temp_directory_path() /
              ("r3-report-" + std::to_string(::getpid()) + "-" + Name))
                 .string()) {
    remove();
    auto Opened = History::open(Path, HistoryMode::Create);
    REQUIRE(Opened);
    H = std::move(*Opened);
    Kernel = *H->putKernel({0, "k", "k.h5", "fp"});
    VariantRow V;
    V.KernelId = Kernel;
    V.GenomeKey = "recorded";
    V.GenomeJson = "{}";
    V.Operator = "original";
    Variant = H->addVariant(V)->value();
  }
  ~TempHistory() {
    H.reset();
    remove();
  }
  void remove() {
    for (const char *Suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(Path + Suffix);
  }
  /// A verified evaluation on Device; returns its candidate's id.
  int64_t evaluation(const std::string &Level, const std::string &Device,
                     double Ms, std::optional<int64_t> Parent = {}) {
    CandidateRow C;
    C.Identity = "id" + std::to_string(++Serial);
    C.KernelId = Kernel;
    C.VariantId = Variant;
    C.Level = Level;
    C.Operator = Level == "baseline" ? "original" : "bo";
    C.ParentId = Parent;
    int64_t Id = H->addCandidate(C)->value();
    EvaluationRow E;
    E.CandidateId = Id;
    E.Device = Device;
    E.Result.Verified = true;
    E.Result.TimesNs = {static_cast<uint64_t>(Ms * 1e6)}; // timed
    E.MedianMs = Ms;
    E.CiLoMs = Ms * 0.9;
    E.CiHiMs = Ms * 1.1;
    REQUIRE(H->addEvaluation(E));
    return Id;
  }
  void baseline(const std::string &Device, double Ms) {
    REQUIRE(H->addBaseline(
        {0, Kernel, 0, Device, Ms, Ms * 0.9, Ms * 1.1, 0, 0, 0, 0}));
  }
  std::vector<report::KernelSummary> summaries() {
    auto Es = H->evaluations();
    REQUIRE(Es);
    Evaluations = std::move(*Es);
    auto S = report::summarizeKernels(*H, Evaluations);
    REQUIRE(S);
    return std::move(*S);
  }
  std::vector<EvaluatedCandidate> Evaluations;
};
} // namespace

TEST_CASE("report: summaries and lineage from a history of two devices",
          "[report]") {
  TempHistory T("two-devices");
  int64_t Base = T.evaluation("baseline", "slow", 3.3);
  T.baseline("slow", 3.3);
  T.baseline("fast", 1.1);
  int64_t Step = T.evaluation("compiler", "fast", 0.55, Base); // 2x
  int64_t Best = T.evaluation("compiler", "slow", 1.1, Step);  // 3x
  T.evaluation("compiler", "elsewhere", 0.2, Step); // no baseline there
  auto S = T.summaries();
  REQUIRE(S.size() == 1);
  const report::KernelSummary &K = S[0];
  CHECK(K.Evaluations == 4);
  CHECK(K.Verified == 4);
  REQUIRE(K.Best);
  CHECK(K.Best->Candidate.Id == Best);
  CHECK(K.Baseline->Value == Approx(3.3));
  CHECK(K.speedup()->Value == Approx(3.0));
  std::map<int64_t, const EvaluatedCandidate *> ById;
  for (const EvaluatedCandidate &E : T.Evaluations)
    ById[E.Candidate.Id] = &E;
  // Each step against the one before on the best's device's scale: the
  // fast device's 0.55 ms is 1.65 ms there.
  auto L = report::lineageOf(K, ById);
  REQUIRE(L.size() == 3);
  CHECK(L[0].Step->Candidate.Id == Base);
  CHECK(L[0].Factor == Approx(1.0));
  CHECK(L[1].Factor == Approx(2.0));
  CHECK(L[2].Factor == Approx(1.5));
}

TEST_CASE("report: summaries from a history whose baselines are only "
          "evaluations",
          "[report]") {
  TempHistory T("evaluations-only");
  T.evaluation("baseline", "cpu", 4.0);
  T.evaluation("compiler", "cpu", 3.2);
  auto S = T.summaries();
  REQUIRE(S.size() == 1);
  CHECK(S[0].Baseline->Value == Approx(4.0));
  CHECK(S[0].Baseline->Lo == Approx(3.6));
  CHECK(S[0].speedup()->Value == Approx(1.25));
}

TEST_CASE("report: measured runs that cannot resolve the prediction say so",
          "[report]") {
  // As on XSBench: 1.1% of the run, a 1.001x prediction, and three pairs
  // of runs whose ratios range from 0.90x to 1.03x.
  report::EndToEnd E;
  E.Kernels = {{"xs", 0.011, 1.09}};
  E.Shares = 0.011;
  E.Predicted = 1.001;
  E.Ceiling = 1.011;
  E.Original = {1.10, 0.84, 0.97};
  E.Tuned = {1.07, 0.94, 1.02};
  E.Measured = 0.95;
  E.MeasuredLo = 0.90;
  E.MeasuredHi = 1.03;
  std::string Loose = report::describeEndToEnd(E);
  CHECK(Loose.find("over 3 pairs of runs); the pairs range wider than the "
                   "predicted gain") != std::string::npos);
  // Pairs tighter than a 1.2x prediction confirm it: no word.
  E.Predicted = 1.2;
  E.Measured = 1.19;
  E.MeasuredLo = 1.18;
  E.MeasuredHi = 1.21;
  std::string Tight = report::describeEndToEnd(E);
  CHECK(Tight.find("range wider") == std::string::npos);
  CHECK(Tight.ends_with("over 3 pairs of runs)"));
}
