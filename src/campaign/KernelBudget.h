// Which kernel the next evaluation goes to, when the campaign knows each
// kernel's share of the application's run (`share`, written by `r3 tune
// --app`): the one where the expected end-to-end gain is largest. A kernel
// that takes a share s of the run and whose time is now a fraction R of its
// baseline saves s * dR of the run when an evaluation lowers R by dR. The
// expected dR of the next evaluation is the kernel's recent progress (the
// drop in R over its last few evaluations, per evaluation) plus an
// exploration term that shrinks as the kernel is evaluated, so that a kernel
// no evaluation has helped for a while yields its budget to the others, and
// a light kernel is still tried now and then. Without shares, kernels take
// turns (the campaign's order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace r3 {

/// One kernel as the budget sees it.
struct KernelOutlook {
  double Share = 0; ///< of the application's run, (0, 1]
  /// Its best time over its baseline after each of its evaluations, oldest
  /// first (1 until something beats the baseline).
  std::vector<double> Remaining;
  uint64_t InFlight = 0; ///< evaluations issued, not yet back
};

/// The end-to-end gain expected of the kernel's next evaluation, as a share
/// of the run.
double expectedGain(const KernelOutlook &K);

/// Kernel indices, the largest expected gain first (ties: the lower index).
std::vector<size_t> kernelOrder(const std::vector<KernelOutlook> &Kernels);

} // namespace r3
