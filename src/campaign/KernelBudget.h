// Which kernel the next evaluation goes to, when the campaign knows each
// kernel's share of the application's run (`share`, written by `r3 tune
// --app`): the one where the expected end-to-end gain is largest. A kernel
// that takes a share s of the run and whose time is now a fraction R of its
// baseline saves s * R * d of the run when an evaluation takes a fraction d
// off its time. A search's next evaluation beats its best of n about once
// in n + 1 (as random draws do), by an amount the kernel's own search
// shows: the fraction of its time it took off so far, over the logarithm
// of its evaluations (the size of the gains its candidates spread over),
// drawn towards an exploration prior worth two evaluations. So the
// expected d is that magnitude over n + 1: a kernel whose candidates all
// land within a percent of its baseline yields its budget to one whose
// first evaluations took a third off, however their shares compare, and a
// kernel nobody has evaluated is still tried early. Without shares,
// kernels take turns (the campaign's order).
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
