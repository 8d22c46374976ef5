// Compilers abort. LLVM reports a malformed pass pipeline it accepted
// ("LICM requires MemorySSA") with report_fatal_error, which ends the
// process; a front end or a code generator can crash outright. A campaign
// worker or `r3 compile` must survive that, so each compile runs in a forked
// child: the child's death is an error that says how it died (LLVM's own
// message for a fatal error, the signal otherwise), and a child that runs
// past its time is killed. Forking is safe here because the callers never
// initialize CUDA, and no other thread of theirs is inside LLVM when they
// fork (a campaign worker's other compile threads only fork children of
// their own; its runner talks to a replay server).
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace r3 {

/// Runs Fn in a forked child and returns the bytes it produced, or its
/// error, or an error saying how the child died or that it ran past
/// TimeoutSeconds (then it is killed).
Expected<std::vector<uint8_t>>
runIsolated(const std::function<Expected<std::vector<uint8_t>>()> &Fn,
            double TimeoutSeconds);

/// Installs, in this process, an LLVM fatal-error handler that calls Report
/// with LLVM's message ("LLVM ERROR: ...") and then ends the process with
/// status 70 (a replay server tells its client before it dies).
void onLlvmFatalError(void (*Report)(const char *Message));

} // namespace r3
