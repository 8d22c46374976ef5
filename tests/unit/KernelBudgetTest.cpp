// The Amdahl-led order of kernels: share times expected progress.
#include "Catch.h"

#include "campaign/KernelBudget.h"

using namespace r3;

TEST_CASE("the heavier kernel comes first while both are fresh",
          "[campaign][budget]") {
  std::vector<KernelOutlook> K = {{0.05, {}, 0}, {0.6, {}, 0}};
  CHECK(kernelOrder(K) == std::vector<size_t>{1, 0});
  CHECK(expectedGain(K[1]) == Approx(12 * expectedGain(K[0])));
}

TEST_CASE("a kernel that stopped improving yields to one that improves",
          "[campaign][budget]") {
  // A: half the run, improved early, flat for its last 8 evaluations.
  KernelOutlook Stuck{
      0.5, {1, 0.8, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7}, 0};
  // B: a fifth of the run, still dropping.
  KernelOutlook Moving{0.2, {1, 0.9, 0.8, 0.7}, 0};
  CHECK(kernelOrder({Stuck, Moving}) == std::vector<size_t>{1, 0});
  // Without progress anywhere, exploration decides, weighted by share.
  KernelOutlook Flat{0.2, std::vector<double>(12, 1.0), 0};
  CHECK(kernelOrder({Stuck, Flat}) == std::vector<size_t>{0, 1});
  // Evaluations in flight count as seen: they damp exploration.
  KernelOutlook Busy = Flat;
  Busy.InFlight = 30;
  CHECK(expectedGain(Busy) < expectedGain(Flat));
}

TEST_CASE("a kernel whose candidates gained little yields to a light one",
          "[campaign][budget]") {
  // As on an application of eight kernels: the heaviest (an eighth of the
  // run) has had ten evaluations, all within 1% of its baseline; a light
  // one (a fiftieth) has had only its baseline. Launch settings often take
  // a third off such a kernel: its second evaluation is worth more.
  KernelOutlook Heavy{
      0.12, {1, 1, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99}, 0};
  KernelOutlook Fresh{0.02, {1}, 0};
  CHECK(kernelOrder({Heavy, Fresh}) == std::vector<size_t>{1, 0});
  // A light kernel whose second evaluation took 30% off keeps ahead.
  KernelOutlook Paid{0.02, {1, 0.7, 0.7}, 0};
  CHECK(kernelOrder({Heavy, Paid}) == std::vector<size_t>{1, 0});
  // A heavy kernel still gaining keeps its turn.
  KernelOutlook Gaining{0.12, {1, 0.9, 0.8, 0.7}, 0};
  CHECK(kernelOrder({Gaining, Fresh}) == std::vector<size_t>{0, 1});
}

TEST_CASE("ties keep the campaign's order", "[campaign][budget]") {
  std::vector<KernelOutlook> K(3, KernelOutlook{0.3, {}, 0});
  CHECK(kernelOrder(K) == std::vector<size_t>{0, 1, 2});
  CHECK(kernelOrder({}).empty());
}
