// What `r3 report`, `r3 status`, `r3 export`, the HTML page and `r3 run
// --use` compute from a campaign history, per kernel: its baseline, its best
// verified candidate, the speedup between them with a confidence interval
// (all by the rule of Speedup.h), its evaluations counted by outcome, and
// the best's lineage with the factor each step gained. The commands in
// src/cli read the history, call these and print.
#pragma once

#include "history/History.h"
#include "replay/Speedup.h"

#include <array>
#include <map>
#include <optional>
#include <vector>

namespace r3::report {

/// The failure kinds in the order reports list them.
inline constexpr std::array<FailureKind, 5> ReportedFailures = {
    FailureKind::CompileError, FailureKind::InvalidLaunch, FailureKind::Crashed,
    FailureKind::Timeout, FailureKind::WrongResult};

struct KernelSummary {
  KernelRow Kernel;
  uint64_t Evaluations = 0, Verified = 0;
  /// Counts per kind, indexed like ReportedFailures.
  std::array<uint64_t, ReportedFailures.size()> Failures{};
  /// The rule's view of the kernel's baselines and times.
  KernelTimes Times;
  /// Times.baseline(): the best's device's baseline, or the pooled one.
  std::optional<Estimate> Baseline;
  /// The evaluation Times.best() chose.
  std::optional<EvaluatedCandidate> Best;
  std::optional<VariantRow> BestVariant;

  uint64_t failures() const;
  /// Baseline / best, bounded by the CIs (speedupOf).
  std::optional<Estimate> speedup() const;
};

/// The rule's view of one kernel: its `baselines` rows and its evaluations
/// in commit order, each verified one offered under its index in
/// Evaluations.
KernelTimes kernelTimes(const std::vector<BaselineRow> &Baselines,
                        const std::vector<const EvaluatedCandidate *> &Mine);

/// One summary per kernel, in kernel id order, from the evaluations read
/// once (Evaluations: all of the history's, joined with their candidates).
Expected<std::vector<KernelSummary>>
summarizeKernels(History &H,
                 const std::vector<EvaluatedCandidate> &Evaluations);

/// A step of the best candidate's lineage and the factor it gained over the
/// step before (the first: over the baseline), the times compared as the
/// rule compares them (KernelTimes::comparable).
struct LineageStep {
  const EvaluatedCandidate *Step = nullptr;
  double Factor = 1;
};

/// The best candidate's ancestry through its parents, oldest first: a
/// source variant's parent is its parent variant's best, an inner-loop
/// candidate's its variant's source candidate. It stops at an ancestor
/// without a verified time that compares (ById: the verified evaluations by
/// candidate id). The factors multiply to the speedup. Empty without a best
/// or a baseline.
std::vector<LineageStep>
lineageOf(const KernelSummary &K,
          const std::map<int64_t, const EvaluatedCandidate *> &ById);

} // namespace r3::report
