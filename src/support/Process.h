// Running a compiler or another tool as a child process: posix_spawn with no
// shell, so that no flag or path is ever interpreted by one, with stdout and
// stderr collected (and cut, so that a runaway template error cannot flood a
// report or a prompt). Also temporary files and folders that remove
// themselves. Shared by the host and CUDA front ends.
#pragma once

#include "support/Error.h"

#include <cstddef>
#include <string>
#include <vector>

namespace r3 {

/// Diagnostics beyond this many bytes are cut.
inline constexpr size_t MaxDiagnostics = 16 * 1024;

struct ChildResult {
  int Status = 0;     ///< waitpid's status
  std::string Output; ///< stdout and stderr together, cut at MaxDiagnostics
  bool succeeded() const;
};

/// Runs Argv (Argv[0] looked up in PATH when it has no slash) and collects
/// what it writes to stdout and stderr.
Expected<ChildResult> runCapturing(const std::vector<std::string> &Argv);

/// "exit status 1", "killed by signal 9".
std::string describeStatus(int Status);

/// Output without surrounding white space, with a note when it was cut.
std::string trimmedDiagnostics(const std::string &Output);

/// A temporary file (under $TMPDIR or /tmp) removed when this goes out of
/// scope.
class TempFile {
public:
  static Expected<TempFile> create(const char *Suffix);
  TempFile(TempFile &&O) noexcept : Path(std::move(O.Path)) { O.Path.clear(); }
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  TempFile &operator=(TempFile &&) = delete;
  ~TempFile();
  const std::string &path() const { return Path; }

private:
  explicit TempFile(std::string P) : Path(std::move(P)) {}
  std::string Path;
};

} // namespace r3
