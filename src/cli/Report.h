// What `r3 report` and `r3 status` both compute from a campaign history: per
// kernel, its baseline, its best verified candidate, the speedup between them
// with a confidence interval, and its evaluations counted by outcome.
// Report.cpp defines these; Status.cpp adds the live figures (in flight,
// rate) on top.
#pragma once

#include "campaign/Campaign.h"
#include "campaign/History.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace r3::cli {

/// A time or a ratio with its 95% confidence interval; the interval is
/// unknown when a bound is not positive (a measurement stored without one).
struct Estimate {
  double Value = 0, Lo = 0, Hi = 0;
  bool hasInterval() const { return Lo > 0 && Hi > 0; }
};

/// The failure kinds in the order reports list them.
inline constexpr std::array<FailureKind, 5> ReportedFailures = {
    FailureKind::CompileError, FailureKind::InvalidLaunch, FailureKind::Crashed,
    FailureKind::Timeout, FailureKind::WrongResult};

/// The outcomes of an LLM call in the order reports list them (those the
/// history's llm_calls.outcome allows).
inline constexpr std::array<const char *, 6> LlmOutcomes = {
    "ok", "llm_invalid", "http_error", "timeout", "bad_response", "cancelled"};

struct KernelSummary {
  KernelRow Kernel;
  uint64_t Evaluations = 0, Verified = 0;
  /// Counts per kind, indexed like ReportedFailures.
  std::array<uint64_t, ReportedFailures.size()> Failures{};
  /// The median of the baselines rows (their CI bounds: the medians of the
  /// rows' bounds), else of the verified "baseline"-level evaluations. With
  /// baselines from several devices: those of the best's device.
  std::optional<Estimate> Baseline;
  /// The verified evaluation with the lowest median (ties: the first
  /// committed); evaluations without timed runs never count. With
  /// baselines from several devices: the one with the largest speedup over
  /// its own device's baseline.
  std::optional<EvaluatedCandidate> Best;
  std::optional<VariantRow> BestVariant;

  uint64_t failures() const;
  /// Baseline / best, bounded by the CIs: lo = baseline.lo / best.hi,
  /// hi = baseline.hi / best.lo (no interval when either CI is unknown).
  std::optional<Estimate> speedup() const;
};

/// One summary per kernel, in kernel id order, from the evaluations read
/// once (Evaluations: all of the history's, joined with their candidates).
Expected<std::vector<KernelSummary>>
summarizeKernels(History &H,
                 const std::vector<EvaluatedCandidate> &Evaluations);

/// How busy each worker kept its device in the campaign's latest run (since
/// its last start or resume): the time its candidates' runs and its
/// baseline re-measures took on the device, over the wall time from its
/// first evaluation's start to its last one's end. As JSON:
/// [{worker, device, evaluations, busy_ms, wall_ms, per_minute,
/// busy_fraction}]. Under MPI a worker's device names its rank and host.
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

/// "1.234 ms" with four significant digits; "-" for none.
std::string formatMs(std::optional<double> Ms);
/// "2.10x"; "-" for none.
std::string formatSpeedup(std::optional<double> Ratio);

} // namespace r3::cli
