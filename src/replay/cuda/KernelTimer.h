// Kernel execution times as the application's own launches were timed: by
// CUPTI's activity records (start and end of each kernel on the GPU), the
// way `r3 record` measures them. CUDA events around a launch add its launch
// overhead (about 6.5 us on an H200), which dominates a 10 us kernel. CUPTI
// is loaded at run time, like the driver; where it is missing or cannot
// trace, the replay falls back to events and says so in each result.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace r3::cuda {

class KernelTimer {
public:
  /// Loads CUPTI and turns on kernel activity records for this process; an
  /// error says why it cannot (the replay then times with events).
  static Expected<std::unique_ptr<KernelTimer>> start();
  ~KernelTimer();

  /// Forgets the kernels recorded so far: the next durations() are of the
  /// launches made after this call.
  Error clear();
  /// The durations (ns) of the kernels launched since clear(), in launch
  /// order; none when CUPTI delivered another number of records than Count
  /// (the caller falls back to events for those runs).
  Expected<std::optional<std::vector<uint64_t>>> durations(size_t Count);

private:
  KernelTimer() = default;
};

} // namespace r3::cuda
