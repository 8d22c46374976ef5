// What a replay server drives: one device (a GPU through CUDA, or this CPU
// through the host JIT) holding one opened capture. The server loop
// (Server.cpp) speaks the protocol; a device compiles and runs candidates.
#pragma once

#include "replay/Candidate.h"
#include "support/Error.h"

#include <functional>

namespace r3 {

/// What a device tells its server while it evaluates a candidate.
struct RunHooks {
  /// Once the candidate is compiled, just before its runs start.
  std::function<Error(const CompiledInfo &)> Running;
  /// Before each run (verification, warm-up or timed): the client's per-run
  /// deadline starts again.
  std::function<void()> Tick;
};

class ReplayDevice {
public:
  virtual ~ReplayDevice() = default;
  /// Compiles and runs C. A failing candidate is a result; an error means the
  /// capture cannot be replayed here (a kernel it lacks, memory it cannot
  /// map).
  virtual Expected<CandidateResult> evaluate(const Candidate &C,
                                             const RunHooks &Hooks) = 0;
  /// What runs the candidates: the GPU's name, the CPU's model.
  virtual std::string name() const = 0;
};

} // namespace r3
