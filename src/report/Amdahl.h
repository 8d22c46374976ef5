// Amdahl's law over kernels' shares of an application's run, the one place
// where a kernel's speedup becomes an end-to-end one. A kernel that takes a
// share s of the run and becomes k times faster leaves the run 1 - s + s / k
// of its length; kernels add up. The model assumes that the kernels lie on
// the run's critical path (the host waits for the GPU): time that overlaps
// with host work gains less, which is why `r3 tune --app` measures the
// application too instead of trusting this alone.
#pragma once

#include <vector>

namespace r3::report {

/// One kernel: its share of the run (0 to 1) and its speedup (> 0).
struct KernelGain {
  double Share = 0;
  double Speedup = 1;
};

/// The end-to-end speedup when each kernel gains its speedup; shares that add
/// up to more than 1 are scaled down to 1.
double endToEndSpeedup(const std::vector<KernelGain> &Kernels);

/// The ceiling: the end-to-end speedup if kernels of these shares took no
/// time at all (infinite when they are the whole run).
double endToEndCeiling(const std::vector<double> &Shares);

} // namespace r3::report
