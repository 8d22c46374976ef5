// The report's model (Model.h): what `r3 report`, `status`, `export` and the
// HTML page read from a history beyond the per-kernel summaries of
// Summary.h, as JSON whose keys docs/history-schema.md lists.
#include "report/Model.h"

#include "replay/Stats.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace r3::report {

namespace fs = std::filesystem;

// --- the figures shared with `r3 status` ---

namespace {
double medianOf(std::vector<double> V) { return computeStats(V).Median; }
} // namespace

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
      {"device", K.Best->Evaluation.Device},
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

/// Multiplies Obj[Key] (1 when absent) by Factor.
void multiplyInto(json &Obj, const std::string &Key, double Factor) {
  Obj[Key] = (Obj.contains(Key) ? Obj[Key].get<double>() : 1.0) * Factor;
}

/// The best candidate's lineage (report::lineageOf) as JSON: each step
/// carries the factor it gained over the step before (the first: over the
/// baseline), so their product is the speedup, and "by_level" and
/// "by_operator" say which level and which operator earned which part of it.
json lineageJson(const KernelSummary &K,
                 const std::map<int64_t, const EvaluatedCandidate *> &ById) {
  std::vector<report::LineageStep> Chain = report::lineageOf(K, ById);
  if (Chain.empty())
    return nullptr;
  json Steps = json::array(), ByLevel = json::object(),
       ByOperator = json::object();
  for (const report::LineageStep &S : Chain) {
    const CandidateRow &C = S.Step->Candidate;
    Steps.push_back({{"candidate", C.Id},
                     {"level", C.Level},
                     {"operator", C.Operator},
                     {"median_ms", S.Step->Evaluation.MedianMs},
                     {"factor", S.Factor}});
    multiplyInto(ByLevel, C.Level, S.Factor);
    multiplyInto(ByOperator, C.Operator, S.Factor);
  }
  return {{"steps", Steps}, {"by_level", ByLevel}, {"by_operator", ByOperator}};
}

// --- the LLM operator's calls ---

/// Calls, tokens, latency and outcomes of some LLM calls.
json llmTotals(const std::vector<const LlmCallRow *> &Calls) {
  json ByOutcome = json::object();
  for (const char *O : LlmOutcomes)
    ByOutcome[O] = 0;
  uint64_t In = 0, Out = 0;
  std::vector<double> Latency;
  for (const LlmCallRow *C : Calls) {
    In += C->TokensIn;
    Out += C->TokensOut;
    Latency.push_back(C->LatencyMs);
    ByOutcome[C->Outcome] = ByOutcome.value(C->Outcome, 0) + 1;
  }
  double Total = 0;
  for (double L : Latency)
    Total += L;
  return {{"calls", Calls.size()},
          {"tokens_in", In},
          {"tokens_out", Out},
          {"latency_ms_total", Total},
          {"latency_ms_median",
           Latency.empty() ? json(nullptr) : json(medianOf(Latency))},
          {"by_outcome", ByOutcome}};
}

/// Whether the best candidate descends from a variant the LLM wrote: its
/// lineage has a source-level step of the "llm" operator (a knob mutation of
/// an LLM rewrite keeps its text), or its own variant is one.
bool bestFromLlm(const KernelSummary &K, const json &Lineage) {
  if (K.BestVariant && K.BestVariant->Operator == "llm")
    return true;
  if (Lineage.is_null())
    return false;
  for (const json &S : Lineage["steps"])
    if (S["level"] == "source" && S["operator"] == "llm")
      return true;
  return false;
}

Expected<json> kernelLlmJson(History &H, const KernelSummary &K,
                             const std::vector<LlmCallRow> &Calls,
                             const json &Lineage) {
  std::vector<const LlmCallRow *> Mine;
  for (const LlmCallRow &C : Calls)
    if (C.KernelId == K.Kernel.Id)
      Mine.push_back(&C);
  std::vector<VariantRow> Variants;
  R3_TRY(moveInto(H.variants(K.Kernel.Id), Variants));
  json J = llmTotals(Mine);
  J["variants"] =
      std::count_if(Variants.begin(), Variants.end(),
                    [](const VariantRow &V) { return V.Operator == "llm"; });
  J["best_from_llm"] = bestFromLlm(K, Lineage);
  return J;
}

} // namespace

/// The totals and one entry per model, by name.
json llmSummary(const std::vector<LlmCallRow> &Calls) {
  std::map<std::string, std::vector<const LlmCallRow *>> ByModel;
  std::vector<const LlmCallRow *> All;
  for (const LlmCallRow &C : Calls) {
    All.push_back(&C);
    ByModel[C.Model].push_back(&C);
  }
  json Models = json::array();
  for (const auto &[Model, Mine] : ByModel) {
    Models.push_back(llmTotals(Mine));
    Models.back()["model"] = Model;
  }
  json J = llmTotals(All);
  J["models"] = Models;
  return J;
}

Expected<Campaign> storedCampaign(const CampaignRow &Row,
                                  const std::string &HistoryPath) {
  // The parser checks that the files it names exist, relative to the
  // campaign file's folder: where r3 tune ran, or (a database beside its
  // campaign file, the usual layout) the database's folder.
  auto C = parseCampaign(Row.Text, Row.Path);
  if (C)
    return C;
  fs::path Beside =
      fs::absolute(HistoryPath).parent_path() / fs::path(Row.Path).filename();
  if (auto D = parseCampaign(Row.Text, Beside.string()))
    return D;
  return C;
}

const KernelSpec *findKernelSpec(const Campaign &C, const std::string &Name) {
  for (const KernelSpec &K : C.Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

namespace {
/// The knob indexes of a genome_json, if it has them.
std::optional<std::vector<uint32_t>> genomeKnobs(const std::string &Text) {
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (!J.is_object() || !J.contains("knobs") || !J["knobs"].is_array())
    return std::nullopt;
  std::vector<uint32_t> Out;
  for (const json &I : J["knobs"])
    if (I.is_number_unsigned())
      Out.push_back(I.get<uint32_t>());
    else
      return std::nullopt;
  return Out;
}
} // namespace

std::vector<std::pair<std::string, std::string>>
variantKnobs(const KernelSpec *Spec, const VariantRow &V) {
  std::vector<std::pair<std::string, std::string>> Out;
  auto Knobs = genomeKnobs(V.GenomeJson);
  if (Spec && Knobs && Knobs->size() <= Spec->Knobs.size()) {
    // A knob the genome lacks has its first value, as the campaign ran it.
    for (size_t I = 0; I < Spec->Knobs.size(); ++I) {
      uint32_t Index = I < Knobs->size() ? (*Knobs)[I] : 0;
      const auto &Values = Spec->Knobs[I].Values;
      if (Index >= Values.size())
        return variantKnobs(nullptr, V);
      Out.push_back({Spec->Knobs[I].Name, Values[Index]});
    }
    return Out;
  }
  for (const std::string &Part : split(V.GenomeKey, ',')) {
    size_t Eq = Part.find('=');
    if (Eq == std::string::npos || Eq == 0)
      continue;
    std::string Name = Part.substr(0, Eq);
    if (Name != "file" && Name != "text")
      Out.push_back({Name, Part.substr(Eq + 1)});
  }
  return Out;
}

namespace {

json campaignJson(const std::optional<CampaignRow> &C) {
  if (!C)
    return nullptr;
  return {{"path", C->Path},
          {"backend", C->Backend},
          {"state", C->State},
          {"seed", C->Seed},
          {"created", C->Created}};
}

} // namespace

namespace {
/// One worker's figures while they are gathered.
struct WorkerBusy {
  std::string Device;
  uint64_t Evaluations = 0;
  double BusyMs = 0, First = 0, Last = 0;
  /// Inside the candidates' kernels (their timed runs), loading modules,
  /// restoring inputs, comparing memory with the recording.
  double KernelMs = 0, LoadMs = 0, RestoreMs = 0, VerifyMs = 0;
  void add(double Busy, double Started, double Finished) {
    BusyMs += Busy;
    First = First > 0 ? std::min(First, Started) : Started;
    Last = std::max(Last, Finished);
  }
};

/// Where a worker's wall time went, as fractions of it: inside the
/// candidates' kernels (their timed runs: the figure that matters), module
/// loads, input restores, verification, the rest of the device time (the
/// untimed runs, copies, baselines) and idle (waiting for compiles and
/// messages); null without device times (histories before version 3).
json timeJson(const WorkerBusy &W, double Wall) {
  if (!(Wall > 0) || !(W.BusyMs > 0))
    return nullptr;
  auto Part = [Wall](double Ms) { return std::max(0.0, Ms) / Wall; };
  double Other = W.BusyMs - W.KernelMs - W.RestoreMs - W.VerifyMs;
  double Idle = Wall - W.BusyMs - W.LoadMs;
  return {{"kernel_ms", W.KernelMs},
          {"kernels", Part(W.KernelMs)},
          {"module_loads", Part(W.LoadMs)},
          {"restores", Part(W.RestoreMs)},
          {"verification", Part(W.VerifyMs)},
          {"other_device", Part(Other)},
          {"idle", Part(Idle)}};
}

/// When the campaign's latest run began: its last start or resume event.
Expected<double> latestRunStart(History &H) {
  double Since = 0;
  for (const char *Kind : {"start", "resume"}) {
    std::optional<EventRow> E;
    R3_TRY(moveInto(H.lastEvent(Kind), E));
    if (E)
      Since = std::max(Since, E->At);
  }
  return Since;
}
} // namespace

Expected<json> workersJson(History &H,
                           const std::vector<EvaluatedCandidate> &Evaluations) {
  double Since = 0;
  R3_TRY(moveInto(latestRunStart(H), Since));
  std::map<int64_t, WorkerBusy> By;
  for (const EvaluatedCandidate &E : Evaluations) {
    const EvaluationRow &R = E.Evaluation;
    if (R.Started < Since)
      continue;
    WorkerBusy &W = By[R.Worker];
    W.Device = R.Device;
    ++W.Evaluations;
    W.add(R.Result.BusyMs, R.Started, R.Finished);
    for (uint64_t Ns : R.Result.TimesNs)
      W.KernelMs += static_cast<double>(Ns) / 1e6;
    W.LoadMs += R.Result.LoadMs;
    W.RestoreMs += R.Result.RestoreMs;
    W.VerifyMs += R.Result.VerifyMs;
  }
  std::vector<BaselineRow> Bs;
  R3_TRY(moveInto(H.baselines(), Bs));
  for (const BaselineRow &B : Bs)
    if (B.Started >= Since && B.Started > 0 && B.BusyMs > 0)
      By[B.Worker].add(B.BusyMs, B.Started, B.Measured);
  json Out = json::array();
  for (const auto &[Worker, W] : By) {
    double Wall = std::max(0.0, W.Last - W.First) * 1000;
    Out.push_back({{"worker", Worker},
                   {"device", W.Device},
                   {"evaluations", W.Evaluations},
                   {"busy_ms", W.BusyMs},
                   {"wall_ms", Wall},
                   {"per_minute", Wall > 0 ? json(W.Evaluations * 60000.0 /
                                                  Wall)
                                           : json(nullptr)},
                   // No device time at all: a history from before r3 kept
                   // it, not an idle device.
                   {"busy_fraction",
                    Wall > 0 && W.BusyMs > 0
                        ? json(std::min(1.0, W.BusyMs / Wall))
                        : json(nullptr)},
                   {"time", timeJson(W, Wall)}});
  }
  return Out;
}

std::string workersText(const json &Workers) {
  std::string Out;
  // A history that kept no device time (older than version 3) has nothing
  // to say here.
  bool Any = false;
  for (const json &W : Workers)
    Any |= W["busy_fraction"].is_number();
  if (!Any)
    return Out;
  for (const json &W : Workers) {
    char Line[512];
    const json &F = W["busy_fraction"];
    std::snprintf(Line, sizeof Line,
                  "  worker %lld: %s, %llu evaluations (%.1f a minute), "
                  "device busy %s of %.1f s\n",
                  W["worker"].get<long long>(),
                  W["device"].get<std::string>().c_str(),
                  W["evaluations"].get<unsigned long long>(),
                  W["per_minute"].is_number() ? W["per_minute"].get<double>()
                                              : 0.0,
                  F.is_number()
                      ? (std::to_string(std::lround(F.get<double>() * 100)) +
                         "%")
                            .c_str()
                      : "-",
                  W["wall_ms"].get<double>() / 1000);
    Out += Line;
    if (const json &T = W["time"]; T.is_object()) {
      auto Pct = [&T](const char *Key) {
        return std::to_string(std::lround(T[Key].get<double>() * 100)) + "%";
      };
      Out += "    in its kernels " + Pct("kernels") + " (timed runs), module "
             "loads " + Pct("module_loads") + ", input restores " +
             Pct("restores") + ", verification " + Pct("verification") +
             ", other device time " + Pct("other_device") +
             ", idle " + Pct("idle") + "\n";
    }
  }
  return Out;
}

Expected<json> reportJson(History &H) {
  std::optional<CampaignRow> Campaign;
  std::vector<EvaluatedCandidate> Evaluations;
  std::vector<KernelSummary> Kernels;
  std::vector<LlmCallRow> Calls;
  R3_TRY(moveInto(H.campaign(), Campaign));
  R3_TRY(moveInto(H.evaluations(), Evaluations));
  R3_TRY(moveInto(summarizeKernels(H, Evaluations), Kernels));
  R3_TRY(moveInto(H.llmCalls(), Calls));
  std::map<int64_t, const EvaluatedCandidate *> ById;
  for (const EvaluatedCandidate &E : Evaluations)
    if (E.Evaluation.Result.Verified)
      ById[E.Candidate.Id] = &E;
  json Ks = json::array();
  for (const KernelSummary &K : Kernels) {
    json &KJ = Ks.emplace_back(kernelJson(K));
    KJ["lineage"] = lineageJson(K, ById);
    R3_TRY(moveInto(kernelLlmJson(H, K, Calls, KJ["lineage"]), KJ["llm"]));
  }
  json Workers;
  R3_TRY(moveInto(workersJson(H, Evaluations), Workers));
  report::EndToEnd E;
  R3_TRY(moveInto(endToEndOf(H, Kernels), E));
  return json{{"database", H.path()},
              {"campaign", campaignJson(Campaign)},
              {"end_to_end", endToEndJson(E)},
              {"evaluations", Evaluations.size()},
              {"workers", Workers},
              {"kernels", Ks},
              {"llm", llmSummary(Calls)}};
}

} // namespace r3::report
