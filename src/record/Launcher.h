// Starting the application `r3 record` records: resolving its name through
// PATH (with a clear error when it is missing or not executable), spawning it
// with posix_spawn and extra environment variables (the record contract of
// RecordEnv.h), and waiting for it. The application inherits r3's stdin,
// stdout and stderr, so its output passes through unchanged.
#pragma once

#include "support/Error.h"

#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace r3 {

/// How the application ended.
struct ExitStatus {
  enum class Kind { Exited, Signaled };
  Kind How = Kind::Exited;
  int Code = 0; ///< the exit code, or the signal number
  /// Exited with status 0.
  bool succeeded() const { return How == Kind::Exited && Code == 0; }
};

/// The file that running Name would execute: Name itself when it contains a
/// '/', else the first executable match in PATH. Errors say which.
Expected<std::string> resolveProgram(const std::string &Name);

/// The record stream's socketpair, its buffers enlarged: [0] stays in r3,
/// [1] goes to the application (inherited: FD_CLOEXEC is cleared on it).
Error recordStreamPair(int Fds[2]);

/// Starts Path with Argv (Argv[0] as given) and the current environment plus
/// Extra (replacing variables of the same names). File descriptors without
/// FD_CLOEXEC are inherited. With OutFd or ErrFd >= 0, the application's
/// stdout or stderr goes there (r3 profile keeps them off its own stdout).
Expected<pid_t>
spawnProgram(const std::string &Path, const std::vector<std::string> &Argv,
             const std::vector<std::pair<std::string, std::string>> &Extra,
             int OutFd = -1, int ErrFd = -1);

/// Waits for Pid to end.
Expected<ExitStatus> waitForProgram(pid_t Pid);

/// "exit code 3", "signal 11 (Segmentation fault)".
std::string describeExit(const ExitStatus &S);

} // namespace r3
