// The Amdahl-led order of kernels (KernelBudget.h).
#include "campaign/KernelBudget.h"

#include <algorithm>
#include <numeric>

namespace r3 {

namespace {
/// Evaluations the recent progress is taken over.
constexpr size_t Window = 8;
/// The exploration term's scale: what one evaluation of a kernel nobody has
/// evaluated is expected to take off its time.
constexpr double Explore = 0.25;
} // namespace

double expectedGain(const KernelOutlook &K) {
  const std::vector<double> &R = K.Remaining;
  double Now = R.empty() ? 1 : R.back();
  size_t N = R.size();
  size_t W = std::min(N, Window);
  double Before = N > W ? R[N - W - 1] : 1;
  double Progress = W ? std::max(0.0, Before - Now) / W : 0;
  double Seen = static_cast<double>(N + K.InFlight);
  double Exploration = Explore * Now / (1 + Seen);
  return K.Share * (Progress + Exploration);
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
