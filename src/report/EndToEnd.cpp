// The end-to-end view (EndToEnd.h).
#include "report/EndToEnd.h"

#include "replay/Stats.h"
#include "report/Amdahl.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace r3::report {

namespace {
std::string times(double V) { return formatFactor(V, 3); }

void addRuns(EndToEnd &E, const std::vector<AppRunRow> &Runs) {
  for (const AppRunRow &R : Runs)
    if (R.ExitCode == 0 && R.WallSeconds > 0)
      (R.Variant == "original" ? E.Original : E.Tuned).push_back(R.WallSeconds);
  // The k-th run of each arm make a pair (whichever ran first in it).
  std::vector<double> Ratios;
  for (size_t I = 0; I < std::min(E.Original.size(), E.Tuned.size()); ++I)
    Ratios.push_back(E.Original[I] / E.Tuned[I]);
  if (Ratios.empty())
    return;
  E.Measured = computeStats(Ratios).Median;
  E.MeasuredLo = *std::min_element(Ratios.begin(), Ratios.end());
  E.MeasuredHi = *std::max_element(Ratios.begin(), Ratios.end());
}
} // namespace

EndToEnd endToEnd(const std::vector<KernelSummary> &Kernels,
                  const std::vector<std::pair<std::string, double>> &Shares,
                  const std::vector<AppRunRow> &Runs) {
  EndToEnd E;
  std::vector<KernelGain> Gains;
  std::vector<double> Parts;
  for (const auto &[Name, Share] : Shares) {
    KernelPart P{Name, Share, 1};
    for (const KernelSummary &K : Kernels)
      if (K.Kernel.Name == Name)
        if (auto S = K.speedup();
            S && (S->hasInterval() ? S->Lo : S->Value) >= DefaultMinSpeedup)
          P.Speedup = S->Value;
    E.Kernels.push_back(P);
    E.Shares += Share;
    Gains.push_back({Share, P.Speedup});
    Parts.push_back(Share);
  }
  E.Predicted = endToEndSpeedup(Gains);
  E.Ceiling = endToEndCeiling(Parts);
  addRuns(E, Runs);
  return E;
}

std::string describeEndToEnd(const EndToEnd &E) {
  std::string S = "predicted " + times(E.Predicted) + " from " +
                  std::to_string(E.Kernels.size()) + " kernel" +
                  (E.Kernels.size() == 1 ? "" : "s") + " taking " +
                  formatShare(E.Shares) + " of the run (ceiling " +
                  times(E.Ceiling) + ")";
  if (!E.Measured)
    return S + "; not measured yet";
  size_t Pairs = std::min(E.Original.size(), E.Tuned.size());
  S += "; measured " + times(*E.Measured) + " (" + times(*E.MeasuredLo) +
       " to " + times(*E.MeasuredHi) + " over " + std::to_string(Pairs) +
       " pair" + (Pairs == 1 ? "" : "s") + " of runs)";
  // Pairs whose ratios range wider than the gain predicted can neither
  // confirm nor refute it: say so, and what would.
  if (Pairs >= 2 && *E.MeasuredHi - *E.MeasuredLo > std::fabs(E.Predicted - 1))
    S += "; the pairs range wider than the predicted gain, so they neither "
         "confirm nor refute it (more --measure-runs, or a run in which the "
         "kernels weigh more, would)";
  return S;
}

} // namespace r3::report
