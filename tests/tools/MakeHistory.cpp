// r3-make-history OUT.db: a campaign history with known contents, for the
// tests of `r3 status` and `r3 report`. Three kernels:
//   matmul   three baselines (medians 2.0, 2.1, 2.4 ms), three verified
//            evaluations (best 1.0 ms, CI [0.95, 1.1], found by "bo" at the
//            compiler level on a knob variant), one failure of each kind and
//            a second wrong result, one candidate running and one queued; all
//            finished a minute or two ago. Lineage of the best: candidate 3
//            (bo) <- 2 (the knob variant's source candidate) <- 1 (the
//            recorded code); variant 2's parent is variant 1. Its archive:
//            variant 2 in cell 4 of island 1
//   stencil  no baselines rows: a "baseline"-level evaluation of 4.0 ms, a
//            best of 3.2 ms at the launch level, a timeout; an hour ago
//   spmv     a crash and a compile error, half a minute ago; nothing verified
// The campaign is "running" with a budget of 40 evaluations.
#include "campaign/History.h"

#include <chrono>
#include <cstdio>
#include <optional>

using namespace r3;

namespace {
double Now = 0;

struct Outcome {
  FailureKind Failure = FailureKind::None;
  double MedianMs = 0, CiLoMs = 0, CiHiMs = 0;
};

Outcome verified(double Median, double Lo, double Hi) {
  return {FailureKind::None, Median, Lo, Hi};
}

Outcome failed(FailureKind K) { return {K, 0, 0, 0}; }

/// What a candidate is: where it comes from and how it ran.
struct Spec {
  std::string Level, Operator, Point, Settings;
  Outcome Result;
  double AgeSeconds = 60;
  std::optional<int64_t> Parent; ///< the candidate it derives from
};

class Builder {
public:
  explicit Builder(History &H) : H(H) {}

  Expected<int64_t> kernel(const std::string &Name) {
    return H.putKernel({0, Name, Name + ".h5", "fingerprint-" + Name});
  }

  Expected<int64_t> variant(int64_t Kernel, const std::string &Key,
                            const std::string &Operator, int64_t Island,
                            const std::string &Parents) {
    VariantRow V;
    V.KernelId = Kernel;
    V.GenomeKey = Key;
    V.GenomeJson = "{}";
    V.ParentsJson = Parents;
    V.Operator = Operator;
    V.Island = Island;
    V.Created = Now - 3600;
    if (Key != "recorded") {
      V.GenomeJson = R"({"file":0,"knobs":[1]})";
      V.SourceHash = "source-" + Key;
      R3_TRY(H.putSource(V.SourceHash, "// " + Key + "\n"));
    }
    auto Id = H.addVariant(V);
    if (!Id)
      return Id.takeError();
    return Id->value_or(0);
  }

  Expected<int64_t> candidate(int64_t Kernel, int64_t Variant, const Spec &S,
                              CandidateState State) {
    CandidateRow C;
    C.Identity = "identity-" + std::to_string(++Serial);
    C.KernelId = Kernel;
    C.VariantId = Variant;
    C.Level = S.Level;
    C.Operator = S.Operator;
    C.ParentId = S.Parent;
    C.Point = S.Point;
    C.PointJson = S.Point.empty() ? "" : "[[1],[3]]";
    C.SettingsJson = S.Settings;
    C.State = State;
    if (State == CandidateState::Running)
      C.Worker = 1;
    C.Created = Now - S.AgeSeconds - 5;
    auto Id = H.addCandidate(C);
    if (!Id)
      return Id.takeError();
    return Id->value_or(0);
  }

  /// A candidate with its evaluation; returns the candidate's id.
  Expected<int64_t> evaluated(int64_t Kernel, int64_t Variant, const Spec &S) {
    int64_t Id = 0;
    R3_TRY(moveInto(candidate(Kernel, Variant, S, CandidateState::Queued), Id));
    EvaluationRow E;
    E.CandidateId = Id;
    E.Worker = 0;
    E.Device = "host cpu";
    E.Result.Failure = S.Result.Failure;
    E.Result.Verified = S.Result.Failure == FailureKind::None;
    E.Result.Message = E.Result.Verified
                           ? ""
                           : std::string(failureKindName(S.Result.Failure)) +
                                 " in the fixture";
    E.Result.Pipeline = "default<O2>";
    E.Result.CodegenOpt = 3;
    E.Result.Sandbox = "rlimits";
    E.Result.CompileMs = 12;
    if (E.Result.Verified) {
      for (double Ms : {S.Result.CiLoMs, S.Result.MedianMs, S.Result.MedianMs,
                        S.Result.MedianMs, S.Result.CiHiMs})
        E.Result.TimesNs.push_back(static_cast<uint64_t>(Ms * 1e6));
      E.MedianMs = S.Result.MedianMs;
      E.CiLoMs = S.Result.CiLoMs;
      E.CiHiMs = S.Result.CiHiMs;
      E.MinMs = S.Result.CiLoMs;
    }
    E.EvalMs = 30;
    E.Started = Now - S.AgeSeconds - 1;
    E.Finished = Now - S.AgeSeconds;
    R3_TRY(H.addEvaluation(E).takeError());
    return Id;
  }

  Error baseline(int64_t Kernel, double Median, double Lo, double Hi) {
    return H
        .addBaseline({0, Kernel, 0, "host cpu", Median, Lo, Hi, Now - 100, 0})
        .takeError();
  }

private:
  History &H;
  int Serial = 0;
};

const char *CompilerSettings = R"({"pipeline":"default<O2>","codegen_opt":3})";

Error matmul(Builder &B, History &H) {
  int64_t K = 0, Recorded = 0, Knob = 0, Original = 0, KnobSource = 0;
  R3_TRY(moveInto(B.kernel("matmul"), K));
  R3_TRY(B.baseline(K, 2.0, 1.9, 2.1));
  R3_TRY(B.baseline(K, 2.1, 2.0, 2.2));
  R3_TRY(B.baseline(K, 2.4, 2.3, 2.5));
  R3_TRY(moveInto(B.variant(K, "recorded", "original", 0, "[]"), Recorded));
  R3_TRY(moveInto(B.variant(K, "f0:TILE=16", "knob", 1,
                            "[" + std::to_string(Recorded) + "]"),
                  Knob));
  R3_TRY(moveInto(
      B.evaluated(K, Recorded,
                  {"source", "original", "", "{}", verified(2.05, 2.0, 2.1)}),
      Original));
  R3_TRY(moveInto(B.evaluated(K, Knob,
                              {"source", "knob", "", "{}",
                               verified(1.5, 1.4, 1.6), 60, Original}),
                  KnobSource));
  R3_TRY(
      B.evaluated(K, Knob,
                  {"compiler", "bo", "pipeline=default<O2> codegen_opt=3",
                   CompilerSettings, verified(1.0, 0.95, 1.1), 90, KnobSource})
          .takeError());
  R3_TRY(H.putArchive(K, {{K, 1, 4, Knob, 1.0, "[32,0]"}}));
  for (FailureKind F : {FailureKind::CompileError, FailureKind::InvalidLaunch,
                        FailureKind::Crashed, FailureKind::Timeout,
                        FailureKind::WrongResult, FailureKind::WrongResult})
    R3_TRY(B.evaluated(K, Knob,
                       {"compiler", "bo", "pipeline=O1", CompilerSettings,
                        failed(F), 120, KnobSource})
               .takeError());
  Spec Pending{"compiler", "bo", "pipeline=O3", CompilerSettings};
  Pending.AgeSeconds = 10;
  Pending.Parent = KnobSource;
  R3_TRY(B.candidate(K, Knob, Pending, CandidateState::Running).takeError());
  Pending.Point = "pipeline=O0";
  return B.candidate(K, Knob, Pending, CandidateState::Queued).takeError();
}

Error stencil(Builder &B) {
  int64_t K = 0, Recorded = 0;
  R3_TRY(moveInto(B.kernel("stencil"), K));
  R3_TRY(moveInto(B.variant(K, "recorded", "original", 0, "[]"), Recorded));
  R3_TRY(B.evaluated(
              K, Recorded,
              {"baseline", "original", "", "{}", verified(4.0, 3.8, 4.2), 3600})
             .takeError());
  R3_TRY(B.evaluated(K, Recorded,
                     {"launch", "random", "block=64", R"({"block":[64,1,1]})",
                      verified(3.2, 3.0, 3.3), 3600})
             .takeError());
  return B
      .evaluated(K, Recorded,
                 {"launch", "random", "block=1024", "{}",
                  failed(FailureKind::Timeout), 3600})
      .takeError();
}

Error spmv(Builder &B) {
  int64_t K = 0, Recorded = 0;
  R3_TRY(moveInto(B.kernel("spmv"), K));
  R3_TRY(moveInto(B.variant(K, "recorded", "original", 0, "[]"), Recorded));
  R3_TRY(B.evaluated(K, Recorded,
                     {"source", "original", "", "{}",
                      failed(FailureKind::Crashed), 30})
             .takeError());
  return B
      .evaluated(K, Recorded,
                 {"compiler", "grid", "pipeline=O1", "{}",
                  failed(FailureKind::CompileError), 30})
      .takeError();
}

Error build(History &H) {
  R3_TRY(H.begin());
  R3_TRY(H.putCampaign({"campaign.toml", "[budget]\nevaluations = 40\n", "host",
                        7, Now - 7200, "running"}));
  R3_TRY(H.addEvent("start", "campaign.toml", Now - 7200));
  Builder B(H);
  R3_TRY(matmul(B, H));
  R3_TRY(stencil(B));
  R3_TRY(spmv(B));
  R3_TRY(H.addEvent("budget", "40"));
  return H.commit();
}
} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    std::fprintf(stderr, "usage: r3-make-history OUT.db\n");
    return 2;
  }
  using namespace std::chrono;
  Now = duration<double>(system_clock::now().time_since_epoch()).count();
  auto H = History::open(Argv[1], HistoryMode::Create);
  Error E = H ? build(**H) : H.takeError();
  if (E) {
    std::fprintf(stderr, "r3-make-history: %s\n", E.message().c_str());
    return 1;
  }
  return 0;
}
