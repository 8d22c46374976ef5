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
//
// r3-make-history OUT.db --llm adds a fourth kernel with what the LLM
// operator writes, for the HTML report and r3 export, and stores a campaign
// file that parses (so that the archive's axes come from it):
//   conv2d   baselines 8.0 and 8.1 ms; variants: the recorded code (1), a
//            knob variant (2, TILE=16 UNROLL=1), an LLM rewrite of it (3,
//            TILE=16 UNROLL=2, its own text), an LLM rewrite of 3 that fails
//            to compile (4), a crossover of 2 and 3 (5). The best, 2.0 ms,
//            is "bo" at the compiler level on variant 3; its lineage:
//            original 8.05 -> knob 6.0 -> bo 5.5 -> llm 3.2 -> bo 2.0 ms.
//            Failures: wrong_result, compile_error, timeout, crashed. LLM
//            calls: ok x3 (one repeated a variant), llm_invalid (its reason
//            and reply hold a <script> element), timeout, http_error,
//            bad_response, over two models. Archive: island 0 holds variants
//            1, 2 and 3, island 1 variants 5 and 3 (migrated)
#include "history/History.h"

#include <chrono>
#include <cstdio>
#include <cstring>
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
  std::optional<int64_t> Parent;        ///< the candidate it derives from
  std::string Pipeline = "default<O2>"; ///< what ran
  int CodegenOpt = 3;
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
    if (Key == "recorded")
      return variant(Kernel, Key, Operator, Island, Parents, "{}", "");
    return variant(Kernel, Key, Operator, Island, Parents,
                   R"({"file":0,"knobs":[1]})", "// " + Key + "\n");
  }

  /// A variant with its genome and text (none: the recorded code).
  Expected<int64_t> variant(int64_t Kernel, const std::string &Key,
                            const std::string &Operator, int64_t Island,
                            const std::string &Parents,
                            const std::string &Genome,
                            const std::string &Text) {
    VariantRow V;
    V.KernelId = Kernel;
    V.GenomeKey = Key;
    V.GenomeJson = Genome;
    V.ParentsJson = Parents;
    V.Operator = Operator;
    V.Island = Island;
    V.Created = Now - 3600;
    if (!Text.empty()) {
      V.SourceHash = "source-" + Key;
      R3_TRY(H.putSource(V.SourceHash, Text));
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
    E.Result.Pipeline = S.Pipeline;
    E.Result.CodegenOpt = S.CodegenOpt;
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

// --- conv2d: the LLM operator at work (--llm) ---

const char *LlmCampaignText = R"toml(# the fixture's campaign
database = "history.db"
backend = "host"
seed = 7

[[kernel]]
name = "matmul"
capture = "matmul.h5"
source = "matmul.c"
[kernel.knobs]
TILE = [8, 16, 32, 64]
UNROLL = [1, 2, 4]

[[kernel]]
name = "stencil"
capture = "stencil.h5"
source = "stencil.c"
[kernel.knobs]
TILE = [8, 16, 32, 64]
UNROLL = [1, 2, 4]

[[kernel]]
name = "spmv"
capture = "spmv.h5"
source = "spmv.c"
[kernel.knobs]
TILE = [8, 16, 32, 64]
UNROLL = [1, 2, 4]

[[kernel]]
name = "conv2d"
capture = "conv2d.h5"
source = "kernels/conv2d.c"
cflags = ["-DCHANNELS=3"]
[kernel.knobs]
TILE = [8, 16, 32, 64]
UNROLL = [1, 2, 4]

[budget]
evaluations = 40
)toml";

/// conv2d.c as the campaign names it, and the LLM's rewrite (the loops
/// swapped, the inner one unrolled by the knob).
const char *Conv2dText = R"c(// conv2d: a 3x3 convolution over a W x H image.
#ifndef TILE
#define TILE 8
#endif

void conv2d(const float *In, float *Out, const float *K, int W, int H) {
  for (int X = 1; X < W - 1; ++X)
    for (int Y = 1; Y < H - 1; ++Y) {
      float Sum = 0;
      for (int I = -1; I <= 1; ++I)
        for (int J = -1; J <= 1; ++J)
          Sum += K[(I + 1) * 3 + J + 1] * In[(Y + I) * W + X + J];
      Out[Y * W + X] = Sum;
    }
}
)c";

const char *Conv2dLlmText = R"c(// conv2d: a 3x3 convolution over a W x H image.
#ifndef TILE
#define TILE 8
#endif

void conv2d(const float *In, float *Out, const float *K, int W, int H) {
  // Rows outside, so that the inner loop walks memory in order.
  for (int Y = 1; Y < H - 1; ++Y)
    for (int X = 1; X < W - 1; ++X) {
      float Sum = 0;
#pragma unroll UNROLL
      for (int I = -1; I <= 1; ++I)
        for (int J = -1; J <= 1; ++J)
          Sum += K[(I + 1) * 3 + J + 1] * In[(Y + I) * W + X + J];
      Out[Y * W + X] = Sum;
    }
}
)c";

/// One LLM call; Age: how long ago it finished.
LlmCallRow llmCall(int64_t Kernel, const std::string &Model,
                   const std::string &Outcome, double Age) {
  LlmCallRow C;
  C.KernelId = Kernel;
  C.Model = Model;
  C.PromptHash = "prompt-1";
  C.Outcome = Outcome;
  C.TokensIn = 2000;
  C.TokensOut = Outcome == "ok" ? 800 : 300;
  C.LatencyMs = 5000;
  C.Attempts = 1;
  C.HttpStatus = 200;
  C.Started = Now - Age - 5;
  C.Finished = Now - Age;
  return C;
}

Error conv2dCalls(History &H, int64_t K, int64_t Knob, int64_t Llm,
                  int64_t Broken) {
  R3_TRY(H.putPrompt("prompt-1", "Rewrite this kernel to run faster: ..."));
  std::vector<LlmCallRow> Calls;
  Calls.push_back(llmCall(K, "model-large", "ok", 2050));
  Calls.back().ParentVariantId = Knob;
  Calls.back().VariantId = Llm;
  Calls.back().LatencyMs = 6400;
  Calls.push_back(llmCall(K, "model-large", "llm_invalid", 1900));
  Calls.back().ParentVariantId = Llm;
  Calls.back().Reason = "the reply defines a host function, main(); "
                        "<script>alert('reason')</script>";
  Calls.back().Reply = "```c\n<script>alert(\"reply\")</script>\n"
                       "int main(void) { return 0; }\n```\n";
  Calls.push_back(llmCall(K, "model-small", "ok", 850));
  Calls.back().ParentVariantId = Llm;
  Calls.back().VariantId = Broken;
  Calls.back().LatencyMs = 2100;
  Calls.push_back(llmCall(K, "model-small", "timeout", 700));
  Calls.back().Reason = "no reply within 60 s";
  Calls.back().Attempts = 3;
  Calls.back().LatencyMs = 180000;
  Calls.back().HttpStatus.reset();
  Calls.push_back(llmCall(K, "model-large", "http_error", 500));
  Calls.back().Reason = "rate limited";
  Calls.back().HttpStatus = 429;
  Calls.push_back(llmCall(K, "model-small", "bad_response", 350));
  Calls.back().Reason = "the reply is not JSON";
  Calls.push_back(llmCall(K, "model-large", "ok", 200));
  Calls.back().ParentVariantId = Llm;
  Calls.back().Reason = "the rewrite repeats variant 3";
  for (const LlmCallRow &C : Calls)
    R3_TRY(H.addLlmCall(C).takeError());
  return Error::success();
}

const char *Conv2dBest = R"({"pipeline":"default<O3>","codegen_opt":2})";

/// Variant ids of conv2d: recorded, knob, llm, broken llm, crossover.
struct Conv2dVariants {
  int64_t Recorded = 0, Knob = 0, Llm = 0, Broken = 0, Cross = 0;
};

Error conv2dVariants(Builder &B, int64_t K, Conv2dVariants &V) {
  R3_TRY(moveInto(B.variant(K, "recorded", "original", 0, "[]"), V.Recorded));
  auto Of = [](int64_t Id) { return "[" + std::to_string(Id) + "]"; };
  R3_TRY(moveInto(B.variant(K, "file=0,TILE=16,UNROLL=1", "knob", 0,
                            Of(V.Recorded), R"({"file":0,"knobs":[1,0]})",
                            Conv2dText),
                  V.Knob));
  R3_TRY(moveInto(B.variant(K, "file=0,TILE=16,UNROLL=2,text=00c0ffee", "llm",
                            0, Of(V.Knob),
                            R"({"file":0,"knobs":[1,1],"text_hash":"x"})",
                            Conv2dLlmText),
                  V.Llm));
  R3_TRY(moveInto(B.variant(K, "file=0,TILE=32,UNROLL=2,text=0badc0de", "llm",
                            1, Of(V.Llm),
                            R"({"file":0,"knobs":[2,1],"text_hash":"y"})",
                            "void conv2d(oops\n"),
                  V.Broken));
  return moveInto(B.variant(K, "file=0,TILE=64,UNROLL=4", "crossover", 1,
                            "[" + std::to_string(V.Knob) + "," +
                                std::to_string(V.Llm) + "]",
                            R"({"file":0,"knobs":[3,2]})", Conv2dText),
                  V.Cross);
}

Error conv2d(Builder &B, History &H) {
  int64_t K = 0, Original = 0, KnobSource = 0, KnobBest = 0, LlmSource = 0;
  R3_TRY(moveInto(B.kernel("conv2d"), K));
  R3_TRY(B.baseline(K, 8.0, 7.8, 8.2));
  R3_TRY(B.baseline(K, 8.1, 7.9, 8.3));
  Conv2dVariants V;
  R3_TRY(conv2dVariants(B, K, V));
  const std::string Bo = "pipeline=default<O3> codegen_opt=2";
  auto Run = [&](int64_t Variant, Spec S) {
    return B.evaluated(K, Variant, S);
  };
  R3_TRY(moveInto(Run(V.Recorded, {"source", "original", "", "{}",
                                   verified(8.05, 7.9, 8.2), 3000}),
                  Original));
  R3_TRY(moveInto(Run(V.Knob, {"source", "knob", "", "{}",
                               verified(6.0, 5.8, 6.2), 2800, Original}),
                  KnobSource));
  R3_TRY(moveInto(
      Run(V.Knob, {"compiler", "bo", Bo, Conv2dBest, verified(5.5, 5.3, 5.7),
                   2600, KnobSource, "default<O3>", 2}),
      KnobBest));
  R3_TRY(Run(V.Knob, {"compiler", "bo", "pipeline=default<O1>", "{}",
                      failed(FailureKind::WrongResult), 2500, KnobSource})
             .takeError());
  R3_TRY(moveInto(Run(V.Llm, {"source", "llm", "", "{}",
                              verified(3.2, 3.1, 3.3), 2000, KnobBest}),
                  LlmSource));
  R3_TRY(Run(V.Llm, {"compiler", "bo", "pipeline=default<O2>", "{}",
                     verified(2.5, 2.4, 2.6), 1500, LlmSource})
             .takeError());
  int64_t Best = 0;
  R3_TRY(moveInto(
      Run(V.Llm, {"compiler", "bo", Bo, Conv2dBest, verified(2.0, 1.9, 2.1),
                  1000, LlmSource, "default<O3>", 2}),
      Best));
  R3_TRY(Run(V.Broken, {"source", "llm", "", "{}",
                        failed(FailureKind::CompileError), 800, Best})
             .takeError());
  R3_TRY(Run(V.Cross, {"source", "crossover", "", "{}", verified(4.0, 3.9, 4.1),
                       600, KnobBest})
             .takeError());
  R3_TRY(Run(V.Cross, {"compiler", "bo", "pipeline=default<O1>", "{}",
                       failed(FailureKind::Timeout), 400, KnobBest})
             .takeError());
  R3_TRY(Run(V.Llm, {"compiler", "bo", "pipeline=default<O0>", "{}",
                     failed(FailureKind::Crashed), 300, LlmSource})
             .takeError());
  // Cells are row-major over (TILE, UNROLL): TILE index * 3 + UNROLL index.
  R3_TRY(H.putArchive(K, {{K, 0, 0, V.Recorded, 8.05, "[0,0]"},
                          {K, 0, 3, V.Knob, 5.5, "[1,0]"},
                          {K, 0, 4, V.Llm, 2.0, "[1,1]"},
                          {K, 1, 4, V.Llm, 2.0, "[1,1]"},
                          {K, 1, 11, V.Cross, 4.0, "[3,2]"}}));
  return conv2dCalls(H, K, V.Knob, V.Llm, V.Broken);
}

Error build(History &H, bool Llm) {
  R3_TRY(H.begin());
  R3_TRY(H.putCampaign({"campaign.toml",
                        Llm ? LlmCampaignText : "[budget]\nevaluations = 40\n",
                        "host", 7, Now - 7200, "running"}));
  R3_TRY(H.addEvent("start", "campaign.toml", Now - 7200));
  Builder B(H);
  R3_TRY(matmul(B, H));
  R3_TRY(stencil(B));
  R3_TRY(spmv(B));
  if (Llm)
    R3_TRY(conv2d(B, H));
  R3_TRY(H.addEvent("budget", "40"));
  return H.commit();
}
} // namespace

int main(int Argc, char **Argv) {
  bool Llm = Argc == 3 && std::strcmp(Argv[2], "--llm") == 0;
  if (Argc != 2 && !Llm) {
    std::fprintf(stderr, "usage: r3-make-history OUT.db [--llm]\n");
    return 2;
  }
  using namespace std::chrono;
  Now = duration<double>(system_clock::now().time_since_epoch()).count();
  auto H = History::open(Argv[1], HistoryMode::Create);
  Error E = H ? build(**H, Llm) : H.takeError();
  if (E) {
    std::fprintf(stderr, "r3-make-history: %s\n", E.message().c_str());
    return 1;
  }
  return 0;
}
