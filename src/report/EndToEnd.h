// The end-to-end view of a campaign that knows its kernels' shares of the
// application's run (`share` in the campaign, written by `r3 tune --app`):
// the speedup Amdahl predicts from each kernel's measured speedup, the
// ceiling, and, once `r3 tune --app` has run the application both ways, the
// measured speedup with its spread. One home for `r3 status`, `r3 report`
// (text, JSON, HTML) and `r3 tune --app`'s closing line.
#pragma once

#include "history/History.h"
#include "report/Summary.h"

#include <optional>
#include <string>
#include <vector>

namespace r3::report {

/// The speedup below which `r3 run --use` leaves a kernel alone (its lower
/// bound; `r3 run --min-speedup`'s default): the prediction counts such a
/// kernel as not sped up, as the application will run it.
inline constexpr double DefaultMinSpeedup = 1.02;

/// One kernel's part.
struct KernelPart {
  std::string Name;
  double Share = 0;   ///< of the run
  double Speedup = 1; ///< as the application will run it (1: left alone)
};

struct EndToEnd {
  std::vector<KernelPart> Kernels; ///< those with a share
  double Shares = 0;               ///< their summed share of the run
  double Predicted = 1;            ///< Amdahl over Kernels
  double Ceiling = 1;              ///< if they took no time
  /// The measured runs' wall times, and the speedup: the median of the
  /// ratios of each arm's k-th run (a pair), with their smallest and
  /// largest.
  std::vector<double> Original, Tuned;
  std::optional<double> Measured, MeasuredLo, MeasuredHi;
  bool known() const { return !Kernels.empty(); }
};

/// The end-to-end view: Shares by kernel name (from the campaign; kernels
/// without one are left out), speedups from the summaries, runs from the
/// history. Not known() when no kernel has a share.
EndToEnd endToEnd(const std::vector<KernelSummary> &Kernels,
                  const std::vector<std::pair<std::string, double>> &Shares,
                  const std::vector<AppRunRow> &Runs);

/// "predicted 1.12x from 2 kernels taking 35.0% of the run (ceiling 1.54x);
/// measured 1.10x (1.08x to 1.12x over 3 pairs of runs)", and a word when
/// the pairs range wider than the predicted gain.
std::string describeEndToEnd(const EndToEnd &E);

} // namespace r3::report
