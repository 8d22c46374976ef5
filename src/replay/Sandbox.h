// The replay server's sandbox: what a candidate may do to the machine. A
// candidate is code r3 compiled (perhaps from an LLM's source), run inside the
// server: it may crash or loop (the client kills the server for that), and it
// must not write files outside the scratch directory, dump cores or exhaust
// the machine. Set once, right after the server starts and before it reads
// the capture.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace r3 {

struct SandboxSettings {
  std::string ScratchDir;         ///< the working directory; writable
  uint64_t AddressSpaceBytes = 0; ///< RLIMIT_AS; 0: none
  double CpuSeconds = 600;        ///< the first RLIMIT_CPU soft limit
  /// More places where writing stays allowed (the CUDA driver writes to its
  /// device nodes under /dev).
  std::vector<std::string> WritablePaths;
};

/// Applies RLIMIT_CORE 0, RLIMIT_CPU, RLIMIT_AS (when asked, and not under
/// AddressSanitizer, which reserves terabytes of shadow), chdir into the
/// scratch directory and, where the kernel has it, Landlock: reads anywhere,
/// file writes and creation only beneath the scratch directory (and
/// /dev/null). Returns what confines the process: "landlock" or "rlimits".
Expected<std::string> enterSandbox(const SandboxSettings &S);

/// Sets the soft RLIMIT_CPU to the CPU time used so far plus Seconds: a
/// long-lived server gets a fresh budget for each candidate.
Error extendCpuLimit(double Seconds);

/// The Landlock ABI version the kernel offers; 0 when it has none.
int landlockAbiVersion();

} // namespace r3
