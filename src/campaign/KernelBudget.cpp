// The Amdahl-led order of kernels (KernelBudget.h).
#include "campaign/KernelBudget.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace r3 {

namespace {
/// The exploration prior: the fraction of its time a kernel's search is
/// expected to take off, and what it is worth in evaluations.
constexpr double Explore = 0.25;
constexpr double PriorWeight = 2;
} // namespace

double expectedGain(const KernelOutlook &K) {
  const std::vector<double> &R = K.Remaining;
  double Now = R.empty() ? 1 : R.back();
  double N = static_cast<double>(R.size());
  // The gains the kernel's candidates spread over, as its search shows.
  double Seen = std::max(0.0, 1 - Now) / std::max(1.0, std::log(1 + N));
  double Magnitude = (PriorWeight * Explore + N * Seen) / (PriorWeight + N);
  double Next = 1 + N + static_cast<double>(K.InFlight);
  return K.Share * Now * Magnitude / Next;
}

std::vector<size_t> kernelOrder(const std::vector<KernelOutlook> &Kernels) {
  std::vector<double> Gains;
  for (const KernelOutlook &K : Kernels)
    Gains.push_back(expectedGain(K));
  std::vector<size_t> Order(Kernels.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return Gains[A] > Gains[B]; });
  return Order;
}

} // namespace r3
