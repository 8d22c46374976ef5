// `r3 report`: the results of a campaign, from its history database (opened
// read-only, so it works while the campaign runs): per kernel, the baseline
// and best time, the speedup with a confidence interval, the evaluations and
// failures by kind, and what found the best (level, operator, settings,
// source variant). The JSON keys are stable (docs/history-schema.md lists
// them) so that scripts can rely on them.
#include "cli/Report.h"

#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "replay/Stats.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>

namespace r3::cli {

// --- the summaries shared with `r3 status` ---

namespace {
double medianOf(std::vector<double> V) { return computeStats(V).Median; }

std::optional<Estimate> baselineFromRows(const std::vector<BaselineRow> &Rows) {
  if (Rows.empty())
    return std::nullopt;
  std::vector<double> Med, Lo, Hi;
  for (const BaselineRow &B : Rows) {
    Med.push_back(B.MedianMs);
    Lo.push_back(B.CiLoMs);
    Hi.push_back(B.CiHiMs);
  }
  return Estimate{medianOf(Med), medianOf(Lo), medianOf(Hi)};
}

/// The verified evaluations of "baseline"-level candidates, when the kernel
/// has no baselines rows.
std::optional<Estimate>
baselineFromEvaluations(const std::vector<const EvaluatedCandidate *> &Es) {
  std::vector<BaselineRow> Rows;
  for (const EvaluatedCandidate *E : Es)
    if (E->Candidate.Level == "baseline" && E->Evaluation.Result.Verified &&
        E->Evaluation.MedianMs > 0)
      Rows.push_back({0, 0, 0, "", E->Evaluation.MedianMs, E->Evaluation.CiLoMs,
                      E->Evaluation.CiHiMs, 0, 0});
  return baselineFromRows(Rows);
}

void countEvaluation(KernelSummary &K, const EvaluatedCandidate &E) {
  ++K.Evaluations;
  const CandidateResult &R = E.Evaluation.Result;
  if (R.Verified) {
    ++K.Verified;
    bool Timed = E.Evaluation.MedianMs > 0;
    if (Timed &&
        (!K.Best || E.Evaluation.MedianMs < K.Best->Evaluation.MedianMs))
      K.Best = E;
    return;
  }
  for (size_t I = 0; I < ReportedFailures.size(); ++I)
    K.Failures[I] += R.Failure == ReportedFailures[I];
}

Error findBestVariant(History &H, KernelSummary &K) {
  if (!K.Best)
    return Error::success();
  std::vector<VariantRow> Vs;
  R3_TRY(moveInto(H.variants(K.Kernel.Id), Vs));
  for (VariantRow &V : Vs)
    if (V.Id == K.Best->Candidate.VariantId)
      K.BestVariant = std::move(V);
  return Error::success();
}
} // namespace

uint64_t KernelSummary::failures() const { return Evaluations - Verified; }

std::optional<Estimate> KernelSummary::speedup() const {
  if (!Baseline || !Best || !(Best->Evaluation.MedianMs > 0))
    return std::nullopt;
  const EvaluationRow &E = Best->Evaluation;
  Estimate S{Baseline->Value / E.MedianMs, 0, 0};
  if (Baseline->hasInterval() && E.CiHiMs > 0 && E.CiLoMs > 0) {
    S.Lo = Baseline->Lo / E.CiHiMs;
    S.Hi = Baseline->Hi / E.CiLoMs;
  }
  return S;
}

Expected<std::vector<KernelSummary>>
summarizeKernels(History &H,
                 const std::vector<EvaluatedCandidate> &Evaluations) {
  std::vector<KernelRow> Kernels;
  std::vector<BaselineRow> Baselines;
  R3_TRY(moveInto(H.kernels(), Kernels));
  R3_TRY(moveInto(H.baselines(), Baselines));
  std::vector<KernelSummary> Out;
  for (KernelRow &Row : Kernels) {
    KernelSummary &K = Out.emplace_back();
    K.Kernel = std::move(Row);
    std::vector<const EvaluatedCandidate *> Mine;
    for (const EvaluatedCandidate &E : Evaluations)
      if (E.Candidate.KernelId == K.Kernel.Id) {
        Mine.push_back(&E);
        countEvaluation(K, E);
      }
    std::vector<BaselineRow> Rows;
    for (const BaselineRow &B : Baselines)
      if (B.KernelId == K.Kernel.Id)
        Rows.push_back(B);
    K.Baseline =
        Rows.empty() ? baselineFromEvaluations(Mine) : baselineFromRows(Rows);
    R3_TRY(findBestVariant(H, K));
  }
  return Out;
}

std::string formatMs(std::optional<double> Ms) {
  if (!Ms)
    return "-";
  double Abs = std::fabs(*Ms);
  int Digits = Abs > 0 ? 3 - static_cast<int>(std::floor(std::log10(Abs))) : 3;
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.*f ms", std::clamp(Digits, 0, 9), *Ms);
  return Buf;
}

std::string formatSpeedup(std::optional<double> Ratio) {
  if (!Ratio)
    return "-";
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.2fx", *Ratio);
  return Buf;
}

// --- r3 report ---

namespace {
using nlohmann::json;

/// A JSON column parsed; its text when it does not parse; null when empty.
json parsedColumn(const std::string &Text) {
  if (Text.empty())
    return nullptr;
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  return J.is_discarded() ? json(Text) : J;
}

json optionalJson(std::optional<double> V) {
  return V ? json(*V) : json(nullptr);
}

json variantJson(const VariantRow &V) {
  return {{"id", V.Id},
          {"genome_key", V.GenomeKey},
          {"genome", parsedColumn(V.GenomeJson)},
          {"operator", V.Operator},
          {"island", V.Island},
          {"parents", parsedColumn(V.ParentsJson)},
          {"source_hash",
           V.SourceHash.empty() ? json(nullptr) : json(V.SourceHash)}};
}

json bestJson(const KernelSummary &K) {
  if (!K.Best)
    return nullptr;
  const CandidateRow &C = K.Best->Candidate;
  const CandidateResult &R = K.Best->Evaluation.Result;
  return {
      {"candidate", C.Id},
      {"identity", C.Identity},
      {"level", C.Level},
      {"operator", C.Operator},
      {"point", C.Point},
      {"settings", parsedColumn(C.SettingsJson)},
      {"pipeline", R.Pipeline},
      {"codegen_opt", R.CodegenOpt},
      {"variant", K.BestVariant ? variantJson(*K.BestVariant) : json(nullptr)}};
}

json failuresJson(const KernelSummary &K) {
  json F = json::object();
  for (size_t I = 0; I < ReportedFailures.size(); ++I)
    F[failureKindName(ReportedFailures[I])] = K.Failures[I];
  return F;
}

json intervalJson(const std::optional<Estimate> &E) {
  return E && E->hasInterval() ? json::array({E->Lo, E->Hi}) : json(nullptr);
}

json kernelJson(const KernelSummary &K) {
  std::optional<Estimate> Best, Speedup = K.speedup();
  if (K.Best)
    Best = Estimate{K.Best->Evaluation.MedianMs, K.Best->Evaluation.CiLoMs,
                    K.Best->Evaluation.CiHiMs};
  return {
      {"name", K.Kernel.Name},
      {"capture", K.Kernel.Capture},
      {"baseline_ms", optionalJson(K.Baseline ? std::optional(K.Baseline->Value)
                                              : std::nullopt)},
      {"baseline_ci_ms", intervalJson(K.Baseline)},
      {"best_ms",
       optionalJson(Best ? std::optional(Best->Value) : std::nullopt)},
      {"best_ci_ms", intervalJson(Best)},
      {"speedup",
       optionalJson(Speedup ? std::optional(Speedup->Value) : std::nullopt)},
      {"speedup_ci", intervalJson(Speedup)},
      {"evaluations", K.Evaluations},
      {"verified", K.Verified},
      {"failures", failuresJson(K)},
      {"best", bestJson(K)}};
}

/// The best candidate's ancestry, oldest first: each candidate's parent is
/// the one it was derived from (a source variant's parent is its parent
/// variant's best; an inner-loop candidate's is its variant's source
/// candidate). Each step carries the factor it gained over the step before
/// (the first: over the baseline), so their product is the speedup and
/// "by_level" says which level earned which part of it.
json lineageJson(const KernelSummary &K,
                 const std::map<int64_t, const EvaluatedCandidate *> &ById) {
  if (!K.Best || !K.Baseline)
    return nullptr;
  std::vector<const EvaluatedCandidate *> Chain = {&*K.Best};
  std::optional<int64_t> Parent = K.Best->Candidate.ParentId;
  while (Parent && Chain.size() < 10000) {
    auto It = ById.find(*Parent);
    if (It == ById.end() || It->second->Evaluation.MedianMs <= 0)
      break;
    Chain.push_back(It->second);
    Parent = It->second->Candidate.ParentId;
  }
  std::reverse(Chain.begin(), Chain.end());
  json Steps = json::array(), ByLevel = json::object();
  double Before = K.Baseline->Value;
  for (const EvaluatedCandidate *E : Chain) {
    double Ms = E->Evaluation.MedianMs, Factor = Before / Ms;
    Steps.push_back({{"candidate", E->Candidate.Id},
                     {"level", E->Candidate.Level},
                     {"operator", E->Candidate.Operator},
                     {"median_ms", Ms},
                     {"factor", Factor}});
    const std::string &L = E->Candidate.Level;
    ByLevel[L] =
        (ByLevel.contains(L) ? ByLevel[L].get<double>() : 1.0) * Factor;
    Before = Ms;
  }
  return {{"steps", Steps}, {"by_level", ByLevel}};
}

json campaignJson(const std::optional<CampaignRow> &C) {
  if (!C)
    return nullptr;
  return {{"path", C->Path},
          {"backend", C->Backend},
          {"state", C->State},
          {"seed", C->Seed},
          {"created", C->Created}};
}

Expected<json> reportJson(History &H) {
  std::optional<CampaignRow> Campaign;
  std::vector<EvaluatedCandidate> Evaluations;
  std::vector<KernelSummary> Kernels;
  R3_TRY(moveInto(H.campaign(), Campaign));
  R3_TRY(moveInto(H.evaluations(), Evaluations));
  R3_TRY(moveInto(summarizeKernels(H, Evaluations), Kernels));
  std::map<int64_t, const EvaluatedCandidate *> ById;
  for (const EvaluatedCandidate &E : Evaluations)
    if (E.Evaluation.Result.Verified)
      ById[E.Candidate.Id] = &E;
  json Ks = json::array();
  for (const KernelSummary &K : Kernels) {
    Ks.push_back(kernelJson(K));
    Ks.back()["lineage"] = lineageJson(K, ById);
  }
  return json{{"database", H.path()},
              {"campaign", campaignJson(Campaign)},
              {"evaluations", Evaluations.size()},
              {"kernels", Ks}};
}

// --- the table ---

/// printf into a string.
[[gnu::format(printf, 2, 3)]] void appendf(std::string &Out, const char *Fmt,
                                           ...) {
  char Buf[1024];
  va_list Args;
  va_start(Args, Fmt);
  int N = std::vsnprintf(Buf, sizeof Buf, Fmt, Args);
  va_end(Args);
  if (N >= static_cast<int>(sizeof Buf)) {
    std::string Big(static_cast<size_t>(N) + 1, '\0');
    va_start(Args, Fmt);
    std::vsnprintf(Big.data(), Big.size(), Fmt, Args);
    va_end(Args);
    Big.pop_back();
    Out += Big;
  } else if (N > 0) {
    Out += Buf;
  }
}

std::optional<double> number(const json &J) {
  return J.is_number() ? std::optional<double>(J.get<double>()) : std::nullopt;
}

std::string interval(const json &Ci,
                     std::string (*Format)(std::optional<double>)) {
  if (!Ci.is_array())
    return "";
  return "  [" + Format(number(Ci[0])) + ", " + Format(number(Ci[1])) + "]";
}

/// "key=value key=value" of a settings object (or its text). Settings left
/// as recorded (an empty pipeline, codegen level -1) are not shown; when none
/// is set, the text says so.
std::string settingsText(const json &S) {
  if (!S.is_object())
    return S.is_null() ? "-" : S.dump();
  std::vector<std::string> Parts;
  for (const auto &[Key, Value] : S.items()) {
    if (Value == "" || Value == -1)
      continue;
    Parts.push_back(
        Key + "=" +
        (Value.is_string() ? Value.get<std::string>() : Value.dump()));
  }
  return Parts.empty() ? "as recorded" : join(Parts, " ");
}

std::string failuresText(const json &K) {
  std::vector<std::string> Parts;
  for (const auto &[Kind, N] : K["failures"].items())
    if (N.get<uint64_t>() > 0)
      Parts.push_back(Kind + " " + std::to_string(N.get<uint64_t>()));
  return Parts.empty() ? "" : ": " + join(Parts, ", ");
}

void appendBest(std::string &Out, const json &B) {
  std::string Level = B["level"], Op = B["operator"], Point = B["point"],
              Pipeline = B["pipeline"];
  appendf(Out, "  %-13s %s level, operator %s (candidate %lld)\n",
          "found by:", Level.c_str(), Op.c_str(),
          B["candidate"].get<long long>());
  if (!Point.empty())
    appendf(Out, "  %-13s %s\n", "point:", Point.c_str());
  appendf(Out, "  %-13s %s\n",
          "settings:", settingsText(B["settings"]).c_str());
  appendf(Out, "  %-13s %s, codegen opt %d\n",
          "ran:", Pipeline.empty() ? "-" : Pipeline.c_str(),
          B["codegen_opt"].get<int>());
  const json &V = B["variant"];
  if (V.is_null())
    return;
  std::string Key = V["genome_key"], VOp = V["operator"];
  appendf(Out, "  %-13s %lld (%s, island %lld): %s\n",
          "variant:", V["id"].get<long long>(), VOp.c_str(),
          V["island"].get<long long>(), Key.c_str());
}

/// "lineage:  0.338 ms -> source knob 0.135 ms (2.50x) -> ..." and the
/// factor each level earned.
void appendLineage(std::string &Out, const json &L) {
  std::vector<std::string> Steps, Levels;
  for (const json &S : L["steps"]) {
    std::string Level = S["level"], Op = S["operator"];
    Steps.push_back(Level + " " + Op + " " + formatMs(number(S["median_ms"])) +
                    " (" + formatSpeedup(number(S["factor"])) + ")");
  }
  for (const auto &[Level, Factor] : L["by_level"].items())
    Levels.push_back(Level + " " + formatSpeedup(number(Factor)));
  appendf(Out, "  %-13s %s\n", "lineage:", join(Steps, " -> ").c_str());
  appendf(Out, "  %-13s %s\n", "by level:", join(Levels, ", ").c_str());
}

void appendKernel(std::string &Out, const json &K) {
  std::string Name = K["name"], Capture = K["capture"];
  appendf(Out, "\nkernel %s (%s)\n", Name.c_str(), Capture.c_str());
  appendf(Out, "  %-13s %s%s\n",
          "baseline:", formatMs(number(K["baseline_ms"])).c_str(),
          interval(K["baseline_ci_ms"], formatMs).c_str());
  appendf(Out, "  %-13s %s%s\n",
          "best:", formatMs(number(K["best_ms"])).c_str(),
          interval(K["best_ci_ms"], formatMs).c_str());
  appendf(Out, "  %-13s %s%s\n",
          "speedup:", formatSpeedup(number(K["speedup"])).c_str(),
          interval(K["speedup_ci"], formatSpeedup).c_str());
  uint64_t N = K["evaluations"], Ok = K["verified"];
  appendf(Out, "  %-13s %llu, %llu verified, %llu failed%s\n",
          "evaluations:", static_cast<unsigned long long>(N),
          static_cast<unsigned long long>(Ok),
          static_cast<unsigned long long>(N - Ok), failuresText(K).c_str());
  if (!K["best"].is_null())
    appendBest(Out, K["best"]);
  if (K.contains("lineage") && !K["lineage"].is_null())
    appendLineage(Out, K["lineage"]);
}

std::string reportTable(const json &J) {
  std::string Out;
  const json &C = J["campaign"];
  if (C.is_null()) {
    appendf(Out, "campaign:    (none recorded yet)\n");
  } else {
    std::string Path = C["path"], Backend = C["backend"], State = C["state"];
    appendf(Out, "campaign:    %s (%s backend, %s)\n", Path.c_str(),
            Backend.c_str(), State.c_str());
  }
  std::string Db = J["database"];
  appendf(Out, "database:    %s, %llu evaluations\n", Db.c_str(),
          J["evaluations"].get<unsigned long long>());
  for (const json &K : J["kernels"])
    appendKernel(Out, K);
  return Out;
}

Error writeOutput(const std::string &Text,
                  const std::optional<std::string> &To) {
  if (!To) {
    std::fputs(Text.c_str(), stdout);
    return Error::success();
  }
  std::string Tmp = temporaryPathFor(*To);
  std::FILE *F = std::fopen(Tmp.c_str(), "w");
  if (!F)
    return errnoError("cannot create '" + *To + "'");
  bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
  if (std::fclose(F) != 0 || !Ok) {
    Error E = errnoError("cannot write '" + *To + "'");
    std::remove(Tmp.c_str());
    return E;
  }
  return commitTemporary(Tmp, *To);
}

int runReport(const ParsedArgs &A) {
  if (A.Positional.size() != 1)
    return usageError("'r3 report' takes one campaign database, got " +
                          std::to_string(A.Positional.size()),
                      "report");
  auto Format = choiceValue(A, "--format", {"table", "json"}, "table");
  if (!Format)
    return usageError(Format.error().message(), "report");
  auto H = History::open(A.Positional.front(), HistoryMode::ReadOnly);
  if (!H)
    return fail(H.error());
  auto J = reportJson(**H);
  if (!J)
    return fail(J.error());
  std::string Text = *Format == "json" ? J->dump(2) + "\n" : reportTable(*J);
  if (Error E = writeOutput(Text, A.value("--output")))
    return fail(E);
  return ExitSuccess;
}
} // namespace

CommandSpec reportCommand() {
  return {"report",
          "report a campaign's baselines, best variants and failures",
          "HISTORY.db [--format table|json] [-o FILE]",
          "Per kernel: the baseline and the best verified time, the speedup\n"
          "with its 95% confidence interval, the evaluations and failures by\n"
          "kind, and the level, operator, settings and source variant of the\n"
          "best candidate. The database is opened read-only, so a running\n"
          "campaign can be reported on. docs/history-schema.md lists the JSON\n"
          "keys.",
          {{"--format", "", Arity::Value, "table|json",
            "output format (default table)"},
           {"--output", "-o", Arity::Value, "FILE",
            "write the report here instead of to stdout"}},
          false,
          runReport};
}

} // namespace r3::cli
