// The report's model: what `r3 report`, `r3 status`, `r3 export` and the
// HTML page (Html.h) read from a history beyond the per-kernel summaries of
// Summary.h: the workers' figures, the LLM totals, the stored campaign file,
// the end-to-end view and the formats of times and speedups. The commands
// of src/cli print it.
#pragma once

#include "campaign/Campaign.h"
#include "history/History.h"
#include "report/EndToEnd.h"
#include "report/Summary.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace r3::report {

/// The outcomes of an LLM call in the order reports list them (those the
/// history's llm_calls.outcome allows).
inline constexpr std::array<const char *, 6> LlmOutcomes = {
    "ok", "llm_invalid", "http_error", "timeout", "bad_response", "cancelled"};

/// How busy each worker kept its device in the campaign's latest run (since
/// its last start or resume): the time its candidates' runs and its
/// baseline re-measures took on the device, over the wall time from its
/// first evaluation's start to its last one's end. As JSON:
/// [{worker, device, evaluations, busy_ms, wall_ms, per_minute,
/// busy_fraction, time: {kernel_ms, kernels, module_loads, restores,
/// verification, other_device, idle}}]: where the wall time went, inside the candidates'
/// kernels first. Under MPI a worker's device names its rank and host.
Expected<nlohmann::json>
workersJson(History &H, const std::vector<EvaluatedCandidate> &Evaluations);
/// "  worker 0: NVIDIA H200, 120 evaluations (118.0 a minute), device busy
/// 93% of 61.2 s"
/// lines of workersJson's array (none when no worker kept device times).
std::string workersText(const nlohmann::json &Workers);

/// The report as one JSON object: the keys docs/history-schema.md lists.
Expected<nlohmann::json> reportJson(History &H);

/// Calls, tokens, latency and outcomes of LLM calls, and the same per model:
/// {calls, tokens_in, tokens_out, latency_ms_total, latency_ms_median,
/// by_outcome, models: [{model, ...}]}.
nlohmann::json llmSummary(const std::vector<LlmCallRow> &Calls);

/// The campaign file stored in the history, parsed against the folder r3 runs
/// in, else against the history's folder. It fails where the files it names
/// (captures, sources) are not found there, or when another r3 version wrote
/// it.
Expected<Campaign> storedCampaign(const CampaignRow &Row,
                                  const std::string &HistoryPath);
/// The campaign's spec of a kernel, if it has one of that name.
const KernelSpec *findKernelSpec(const Campaign &C, const std::string &Name);
/// A variant's knobs as NAME, VALUE pairs: its genome's indexes into the
/// campaign's knob domains, or (without a campaign) the pairs its genome key
/// names ("file=0,TILE=16" gives TILE, 16).
std::vector<std::pair<std::string, std::string>>
variantKnobs(const KernelSpec *Spec, const VariantRow &V);

/// The campaign's end-to-end view (report/EndToEnd.h): the shares its
/// stored campaign gives its kernels, and the application's measured runs
/// (EndToEndOf.cpp).
Expected<EndToEnd> endToEndOf(History &H,
                                      const std::vector<KernelSummary> &Ks);
/// As JSON: {kernels: [{name, share, speedup}], share_of_run, predicted,
/// ceiling, original_wall_s, tuned_wall_s, measured, measured_lo,
/// measured_hi, summary}; null when no kernel has a share.
nlohmann::json endToEndJson(const EndToEnd &E);
/// endToEndJson's lines for the text of r3 report and r3 status: "end to
/// end:  <summary>" and each kernel's share and speedup; empty for null.
std::string endToEndText(const nlohmann::json &E);

/// "1.234 ms" with four significant digits; "-" for none.
std::string formatMs(std::optional<double> Ms);
/// "2.10x"; "-" for none.
std::string formatSpeedup(std::optional<double> Ratio);

} // namespace r3::report
