// `r3 status`: the progress of a campaign, from its history database, while
// it runs (the database is opened read-only; WAL lets it read beside the
// writer) or after it ended. It prints the stored state, the evaluations
// against the budget (the latest "budget" event, which the coordinator
// writes at each start), the rate over the last ten minutes, and per kernel
// the counts, the baseline, the best and the candidates in flight.
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "cli/Report.h"
#include "support/Machine.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace r3::cli {

namespace {
using nlohmann::json;

/// The rate is taken over this window, ending now.
constexpr double RateWindowSeconds = 600;

/// Per kernel: candidates running and evaluations finished in the window.
struct Live {
  uint64_t InFlight = 0, Recent = 0;
};

json kernelJson(const KernelSummary &K, const Live &L, double Window) {
  auto Speedup = K.speedup();
  return {
      {"name", K.Kernel.Name},
      {"evaluations", K.Evaluations},
      {"verified", K.Verified},
      {"failures", K.failures()},
      {"in_flight", L.InFlight},
      {"baseline_ms", K.Baseline ? json(K.Baseline->Value) : json(nullptr)},
      {"best_ms", K.Best ? json(K.Best->Evaluation.MedianMs) : json(nullptr)},
      {"speedup", Speedup ? json(Speedup->Value) : json(nullptr)},
      {"per_minute", L.Recent * 60.0 / Window}};
}

json eventJson(const std::optional<EventRow> &E) {
  if (!E)
    return nullptr;
  return {{"kind", E->Kind}, {"message", E->Message}, {"at", E->At}};
}

/// The budget the coordinator recorded, if it did.
Expected<std::optional<uint64_t>> budget(History &H) {
  std::optional<EventRow> E;
  R3_TRY(moveInto(H.lastEvent("budget"), E));
  std::optional<uint64_t> N;
  if (E)
    N = parseUnsigned(E->Message);
  return N;
}

std::map<int64_t, Live> liveCounts(const std::vector<CandidateRow> &Cands,
                                   const std::vector<EvaluatedCandidate> &Es,
                                   double Since) {
  std::map<int64_t, Live> Out;
  for (const CandidateRow &C : Cands)
    Out[C.KernelId].InFlight += C.State == CandidateState::Running;
  for (const EvaluatedCandidate &E : Es)
    Out[E.Candidate.KernelId].Recent += E.Evaluation.Finished >= Since;
  return Out;
}

/// The window the rate is taken over: the last ten minutes, or less when the
/// campaign (re)started more recently, so that a young run's rate is not
/// diluted by minutes in which it did not exist.
Expected<double> rateWindow(History &H, double Now) {
  double Started = 0;
  for (const char *Kind : {"start", "resume"}) {
    std::optional<EventRow> E;
    R3_TRY(moveInto(H.lastEvent(Kind), E));
    if (E)
      Started = std::max(Started, E->At);
  }
  double Since = Now - Started;
  return Since < RateWindowSeconds ? std::max(Since, 1.0) : RateWindowSeconds;
}

json campaignPart(const std::optional<CampaignRow> &C) {
  if (!C)
    return nullptr;
  return {{"path", C->Path},
          {"backend", C->Backend},
          {"state", C->State},
          {"created", C->Created}};
}

/// The time to spend the rest of the budget at the current rate.
json etaJson(const std::optional<CampaignRow> &C, uint64_t Done,
             std::optional<uint64_t> Budget, double PerMinute) {
  if (!C || C->State != "running" || !Budget || *Budget <= Done ||
      !(PerMinute > 0))
    return nullptr;
  return (*Budget - Done) * 60.0 / PerMinute;
}

Expected<json> statusJson(History &H, double Now) {
  std::optional<CampaignRow> Campaign;
  std::vector<EvaluatedCandidate> Es;
  std::vector<CandidateRow> Cands;
  std::vector<KernelSummary> Kernels;
  std::optional<uint64_t> Budget;
  std::optional<EventRow> Last;
  R3_TRY(moveInto(H.campaign(), Campaign));
  R3_TRY(moveInto(H.evaluations(), Es));
  R3_TRY(moveInto(H.candidates(), Cands));
  R3_TRY(moveInto(summarizeKernels(H, Es), Kernels));
  R3_TRY(moveInto(budget(H), Budget));
  R3_TRY(moveInto(H.lastEvent(), Last));
  double Window = 0;
  R3_TRY(moveInto(rateWindow(H, Now), Window));
  auto Live = liveCounts(Cands, Es, Now - Window);
  json Ks = json::array();
  uint64_t InFlight = 0, Recent = 0;
  for (const KernelSummary &K : Kernels) {
    Ks.push_back(kernelJson(K, Live[K.Kernel.Id], Window));
    InFlight += Live[K.Kernel.Id].InFlight;
    Recent += Live[K.Kernel.Id].Recent;
  }
  double PerMinute = Recent * 60.0 / Window;
  std::vector<LlmCallRow> Calls;
  R3_TRY(moveInto(H.llmCalls(), Calls));
  json Llm = Calls.empty() ? json(nullptr) : llmSummary(Calls);
  if (!Llm.is_null())
    Llm.erase("models");
  json Workers;
  R3_TRY(moveInto(workersJson(H, Es), Workers));
  report::EndToEnd E;
  R3_TRY(moveInto(endToEndOf(H, Kernels), E));
  return json{{"database", H.path()},
              {"end_to_end", endToEndJson(E)},
              {"campaign", campaignPart(Campaign)},
              {"state", Campaign ? json(Campaign->State) : json(nullptr)},
              {"evaluations", Es.size()},
              {"budget", Budget ? json(*Budget) : json(nullptr)},
              {"per_minute", PerMinute},
              {"rate_window_seconds", Window},
              {"eta_seconds", etaJson(Campaign, Es.size(), Budget, PerMinute)},
              {"in_flight", InFlight},
              {"last_event", eventJson(Last)},
              {"llm", Llm},
              {"workers", Workers},
              {"kernels", Ks}};
}

// --- the table ---

/// "42 s", "35 min", "2.5 h", "3.0 days".
std::string formatSeconds(double S) {
  char Buf[64];
  S = std::max(0.0, S);
  if (S < 90)
    std::snprintf(Buf, sizeof Buf, "%.0f s", S);
  else if (S < 90 * 60)
    std::snprintf(Buf, sizeof Buf, "%.0f min", S / 60);
  else if (S < 48 * 3600)
    std::snprintf(Buf, sizeof Buf, "%.1f h", S / 3600);
  else
    std::snprintf(Buf, sizeof Buf, "%.1f days", S / 86400);
  return Buf;
}

std::optional<double> number(const json &J) {
  return J.is_number() ? std::optional<double>(J.get<double>()) : std::nullopt;
}

void printProgress(const json &J) {
  uint64_t Done = J["evaluations"];
  std::printf("evaluations: %llu", static_cast<unsigned long long>(Done));
  if (J["budget"].is_number()) {
    uint64_t B = J["budget"];
    std::printf(" / %llu (%.0f%%)", static_cast<unsigned long long>(B),
                B ? 100.0 * Done / B : 0.0);
  }
  double Window = J["rate_window_seconds"].get<double>();
  if (Window >= RateWindowSeconds)
    std::printf(", %.1f per minute over the last 10 minutes",
                J["per_minute"].get<double>());
  else
    std::printf(", %.1f per minute since it started %s ago",
                J["per_minute"].get<double>(), formatSeconds(Window).c_str());
  if (J["eta_seconds"].is_number())
    std::printf(", about %s left",
                formatSeconds(J["eta_seconds"].get<double>()).c_str());
  std::printf("\n");
}

void printHeader(const json &J, double Now) {
  const json &C = J["campaign"];
  std::string Db = J["database"];
  if (C.is_null()) {
    std::printf("campaign:    %s (no campaign recorded yet)\n", Db.c_str());
  } else {
    std::string Path = C["path"], Backend = C["backend"], State = C["state"];
    std::printf("campaign:    %s (%s backend, database %s)\n", Path.c_str(),
                Backend.c_str(), Db.c_str());
    std::printf("state:       %s\n", State.c_str());
  }
  printProgress(J);
  std::printf("in flight:   %llu\n", J["in_flight"].get<unsigned long long>());
  std::printf("%s", endToEndText(J["end_to_end"]).c_str());
  if (const json &L = J["llm"]; !L.is_null()) {
    std::string Outcomes;
    for (const auto &[Name, N] : L["by_outcome"].items())
      if (N.get<uint64_t>())
        Outcomes += (Outcomes.empty() ? "" : ", ") + Name + " " +
                    std::to_string(N.get<uint64_t>());
    std::printf("llm:         %llu calls (%s), %llu tokens in, %llu out\n",
                L["calls"].get<unsigned long long>(), Outcomes.c_str(),
                L["tokens_in"].get<unsigned long long>(),
                L["tokens_out"].get<unsigned long long>());
  }
  const json &E = J["last_event"];
  if (!E.is_null()) {
    std::string Kind = E["kind"], Message = E["message"];
    std::printf("last event:  %s: %s (%s ago)\n", Kind.c_str(), Message.c_str(),
                formatSeconds(Now - E["at"].get<double>()).c_str());
  }
}

void printKernels(const json &Ks) {
  int W = 6;
  for (const json &K : Ks)
    W = std::max(W, static_cast<int>(K["name"].get<std::string>().size()));
  std::printf("\n%-*s %11s %8s %8s %9s %13s %13s %8s %10s\n", W, "kernel",
              "evaluations", "verified", "failures", "in flight", "baseline",
              "best", "speedup", "per minute");
  for (const json &K : Ks) {
    std::string Name = K["name"];
    std::printf("%-*s %11llu %8llu %8llu %9llu %13s %13s %8s %10.1f\n", W,
                Name.c_str(), K["evaluations"].get<unsigned long long>(),
                K["verified"].get<unsigned long long>(),
                K["failures"].get<unsigned long long>(),
                K["in_flight"].get<unsigned long long>(),
                formatMs(number(K["baseline_ms"])).c_str(),
                formatMs(number(K["best_ms"])).c_str(),
                formatSpeedup(number(K["speedup"])).c_str(),
                K["per_minute"].get<double>());
  }
}

int runStatus(const ParsedArgs &A) {
  if (A.Positional.size() != 1)
    return usageError("'r3 status' takes one campaign database, got " +
                          std::to_string(A.Positional.size()),
                      "status");
  auto Format = choiceValue(A, "--format", {"table", "json"}, "table");
  if (!Format)
    return usageError(Format.error().message(), "status");
  auto H = History::open(A.Positional.front(), HistoryMode::ReadOnly);
  if (!H)
    return fail(H.error());
  double Now = nowSeconds();
  auto J = statusJson(**H, Now);
  if (!J)
    return fail(J.error());
  if (*Format == "json") {
    std::printf("%s\n", J->dump(2).c_str());
    return ExitSuccess;
  }
  printHeader(*J, Now);
  if (std::string W = workersText((*J)["workers"]); !W.empty())
    std::printf("workers:\n%s", W.c_str());
  printKernels((*J)["kernels"]);
  return ExitSuccess;
}
} // namespace

CommandSpec statusCommand() {
  return {"status",
          "show the progress of a campaign from its database",
          "HISTORY.db [--format table|json]",
          "Reads the database read-only, so it works from another shell while\n"
          "the campaign runs. The state is the one stored: a campaign killed\n"
          "with kill -9 still reads 'running' until it is resumed. The rate\n"
          "counts the evaluations finished in the last ten minutes.",
          {{"--format", "", Arity::Value, "table|json",
            "output format (default table)"}},
          false,
          runStatus};
}

} // namespace r3::cli
