// Elapsed time as r3 reports it everywhere (compile, load, restore and busy
// times, an evaluation's cost): milliseconds of the steady clock.
#pragma once

#include <chrono>

namespace r3 {

/// Milliseconds of the steady clock since Start.
inline double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

} // namespace r3
