// Profiling an application: one run under the record stream in list mode, in
// which the in-application library times every launch of every kernel (CUPTI
// activity on CUDA, the host runtime's clock on the host backend) and sends
// each kernel's launches, total time and whether r3 could record it. The
// parent measures the run's wall time and keeps the end of its output, so that
// a failed run is reported with its exit status and last lines. A run that
// fails, or whose list is incomplete, yields an error: a partial profile is
// never mistaken for a whole one.
#pragma once

#include "record/AppBackend.h"
#include "record/Launcher.h"
#include "record/Messages.h"

#include <string>
#include <vector>

namespace r3 {

/// What to run, and with which backend.
struct ProfileRequest {
  Backend Source = Backend::Host;
  std::string Injection; ///< CUDA: the injection library's path
  std::string Program;   ///< resolved
  std::vector<std::string> Argv;
  std::vector<std::string> Patterns; ///< --kernel; empty: every kernel
};

/// One profiled run.
struct AppProfile {
  std::vector<wire::KernelStatsMsg> Kernels; ///< in the order first launched
  double WallSeconds = 0;
  std::vector<std::string> Warnings;
};

/// Runs the application once, its stdout and stderr sent to r3's stderr,
/// and returns its kernels' statistics. Errors: the application ended with a
/// non-zero status or a signal (the message has its last lines of output),
/// launched no kernel, or its list was incomplete.
Expected<AppProfile> profileApplication(const ProfileRequest &R);

/// Why a CUDA application sent nothing: the driver could not start, or the
/// application never initialized CUDA. Written says what was not written.
std::string explainNothingSent(const std::string &App,
                               const std::string &Written);

/// The last Lines lines of Output, each indented by two spaces.
std::string lastLines(const std::string &Output, size_t Lines);

} // namespace r3
