// Amdahl's law over kernel shares (Amdahl.h).
#include "report/Amdahl.h"

#include <algorithm>
#include <limits>

namespace r3::report {

double endToEndSpeedup(const std::vector<KernelGain> &Kernels) {
  double Total = 0;
  for (const KernelGain &K : Kernels)
    Total += std::max(0.0, K.Share);
  double Scale = Total > 1 ? 1 / Total : 1;
  double Left = 1;
  for (const KernelGain &K : Kernels) {
    double S = std::max(0.0, K.Share) * Scale;
    Left -= S - (K.Speedup > 0 ? S / K.Speedup : S);
  }
  return Left > 0 ? 1 / Left : std::numeric_limits<double>::infinity();
}

double endToEndCeiling(const std::vector<double> &Shares) {
  std::vector<KernelGain> Free;
  for (double S : Shares)
    Free.push_back({S, std::numeric_limits<double>::infinity()});
  return endToEndSpeedup(Free);
}

} // namespace r3::report
