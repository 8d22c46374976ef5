// What a replay server drives: one device (a GPU through CUDA, or this CPU
// through the host JIT) holding one opened capture. The server loop
// (Server.cpp) speaks the protocol; a device compiles and runs candidates.
#pragma once

#include "replay/Candidate.h"
#include "support/Error.h"

#include <functional>

namespace r3 {

class ReplayDevice {
public:
  virtual ~ReplayDevice() = default;
  /// Called once the candidate is compiled, just before its runs start.
  using RunningFn = std::function<Error(const CompiledInfo &)>;
  /// Compiles and runs C. A failing candidate is a result; an error means the
  /// capture cannot be replayed here (a kernel it lacks, memory it cannot
  /// map).
  virtual Expected<CandidateResult> evaluate(const Candidate &C,
                                             const RunningFn &Running) = 0;
};

} // namespace r3
