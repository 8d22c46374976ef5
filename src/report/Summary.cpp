// Per-kernel summaries of a campaign history (Summary.h): the evaluations
// counted, the rule of Speedup.h applied to the kernel's baselines and
// times, the best's variant and its lineage.
#include "report/Summary.h"

#include <algorithm>

namespace r3::report {

namespace {
Estimate timeOf(const EvaluationRow &E) {
  return {E.MedianMs, E.CiLoMs, E.CiHiMs};
}

void countEvaluation(KernelSummary &K, const EvaluatedCandidate &E) {
  ++K.Evaluations;
  const CandidateResult &R = E.Evaluation.Result;
  if (R.Verified) {
    ++K.Verified;
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
  if (!Baseline || !Best)
    return std::nullopt;
  return speedupOf(*Baseline, timeOf(Best->Evaluation));
}

KernelTimes kernelTimes(const std::vector<BaselineRow> &Baselines,
                        const std::vector<const EvaluatedCandidate *> &Mine) {
  KernelTimes T;
  for (const BaselineRow &B : Baselines)
    T.addBaselineRow(B.Device, {B.MedianMs, B.CiLoMs, B.CiHiMs});
  for (size_t I = 0; I < Mine.size(); ++I) {
    const EvaluationRow &E = Mine[I]->Evaluation;
    if (!E.Result.Verified)
      continue;
    if (Mine[I]->Candidate.Level == "baseline")
      T.addBaselineEvaluation(E.Device, timeOf(E));
    T.addTime(E.Device, timeOf(E), static_cast<int64_t>(I));
  }
  return T;
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
    K.Times = kernelTimes(Rows, Mine);
    K.Baseline = K.Times.baseline();
    if (std::optional<BestTime> B = K.Times.best())
      K.Best = *Mine[static_cast<size_t>(B->Id)];
    R3_TRY(findBestVariant(H, K));
  }
  return Out;
}

std::vector<LineageStep>
lineageOf(const KernelSummary &K,
          const std::map<int64_t, const EvaluatedCandidate *> &ById) {
  if (!K.Best || !K.Baseline)
    return {};
  auto compared = [&](const EvaluatedCandidate &E) {
    return K.Times.comparable(E.Evaluation.Device, E.Evaluation.MedianMs);
  };
  std::vector<std::pair<const EvaluatedCandidate *, double>> Chain = {
      {&*K.Best, compared(*K.Best).value_or(K.Best->Evaluation.MedianMs)}};
  std::optional<int64_t> Parent = K.Best->Candidate.ParentId;
  while (Parent && Chain.size() < 10000) {
    auto It = ById.find(*Parent);
    if (It == ById.end() || It->second->Evaluation.MedianMs <= 0)
      break;
    std::optional<double> Ms = compared(*It->second);
    if (!Ms)
      break;
    Chain.push_back({It->second, *Ms});
    Parent = It->second->Candidate.ParentId;
  }
  std::reverse(Chain.begin(), Chain.end());
  std::vector<LineageStep> Steps;
  double Before = K.Baseline->Value;
  for (const auto &[E, Ms] : Chain) {
    Steps.push_back({E, Before / Ms});
    Before = Ms;
  }
  return Steps;
}

} // namespace r3::report
