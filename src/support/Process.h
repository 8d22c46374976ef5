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
/// what it writes to stdout and stderr; with StdoutFile, stdout goes whole
/// into that file instead (output too large for the diagnostics' cut, such
/// as an AST dump) and Output holds stderr.
Expected<ChildResult> runCapturing(const std::vector<std::string> &Argv,
                                   const std::string &StdoutFile = "");

/// "exit status 1", "killed by signal 9".
std::string describeStatus(int Status);

/// A child spoken to over a pipe pair: r3's own helper processes (replay
/// servers, campaign workers, compile servers), each `/proc/self/exe` with
/// a hidden command.
struct PipedChild {
  int Pid = -1;
  int ToChild = -1, FromChild = -1; ///< this side's ends (close-on-exec)
};

struct PipedChildOptions {
  bool OwnProcessGroup = false; ///< a terminal's ^C does not reach it
  bool StdoutToStderr = false;  ///< what it prints does not mix with r3's
  const std::vector<std::string> *Environment = nullptr; ///< none: ours
};

/// Spawns Argv with the child's ends of two pipes; the words "@IN@" and
/// "@OUT@" in Argv become the numbers of its descriptors for reading and
/// writing. The error says what could not be started.
Expected<PipedChild> spawnPiped(std::vector<std::string> Argv,
                                const PipedChildOptions &O = {});

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
