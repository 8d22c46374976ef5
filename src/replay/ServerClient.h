// The client side of a replay server: spawns the server process, opens the
// capture in it once per start, sends candidates and enforces their time. A
// candidate that kills its server (a fault, a runaway loop killed at its
// deadline) is a result, Crashed or Timeout; the next candidate starts a fresh
// server. The client never loads the capture's code itself: whatever the
// candidate does happens in the child, so that a fault or a hang kills that
// child alone.
#pragma once

#include "capture/CaptureReader.h"
#include "replay/Candidate.h"
#include "replay/ServerProtocol.h"
#include "support/Error.h"

#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace r3 {

struct ServerOptions {
  /// The server's command line; the pipe descriptors are appended. Empty:
  /// this executable (/proc/self/exe) with the word `__replay-server`.
  std::vector<std::string> Command;
  std::string CapturePath;
  std::string ScratchDir;          ///< empty: a fresh directory under $TMPDIR
  double OpenTimeoutSeconds = 120; ///< starting and opening the capture
  double CompileTimeoutSeconds = 120; ///< from Evaluate to Running
  /// Added to the per-run timeout before a run is killed: the restore of
  /// the inputs and the server's own bookkeeping belong to a run.
  double RunSlackSeconds = 1;
  uint64_t AddressSpaceBytes = 0;     ///< RLIMIT_AS of the server; 0: none
};

class ServerClient {
public:
  /// Starts a server and opens the capture in it; an error if either fails
  /// (a missing capture, an address range taken, a server that will not
  /// start). Ignores SIGPIPE in this process, so that a server that dies is
  /// seen as a closed pipe rather than a signal.
  static Expected<std::unique_ptr<ServerClient>> create(ServerOptions Options);
  ~ServerClient();

  /// Compiles and runs C in the server. A candidate that fails is a result
  /// with its FailureKind; an error means the replay itself cannot go on (the
  /// server cannot be restarted, the capture cannot be replayed).
  Expected<CandidateResult> evaluate(const Candidate &C);

  /// What the last server start reported.
  const OpenedMsg &opened() const { return Opened; }
  /// The running server's pid, or -1 when none runs.
  pid_t serverPid() const { return Pid; }
  /// How many servers this client has started.
  unsigned starts() const { return Starts; }

private:
  explicit ServerClient(ServerOptions O) : Options(std::move(O)) {}
  Error start();
  void stop();
  /// The result of a candidate whose server died or was killed.
  CandidateResult deathResult(FailureKind IfKilled, const CompiledInfo &Info,
                              const std::string &Phase);
  Expected<CandidateResult> awaitResult(const Candidate &C);

  ServerOptions Options;
  OpenedMsg Opened;
  std::string OwnScratch; ///< a scratch directory this client made
  pid_t Pid = -1;
  int ToServer = -1, FromServer = -1;
  unsigned Starts = 0;
};

/// The wall-clock seconds a candidate's runs may take in all: (verification
/// run + warm-ups + repetitions) of every launch, times the per-run timeout.
double runBudgetSeconds(const Candidate &C);

/// The replay server's default address-space limit: room for LLVM, the
/// capture's largest launch four times over (regions, pristine copies,
/// verification buffers) and 8 GiB to spare. A candidate that allocates
/// without bound fails inside the server instead of exhausting the machine.
uint64_t defaultAddressSpaceLimit(const CaptureReader &R);

/// "SIGSEGV" for 11.
std::string signalName(int Signal);

} // namespace r3
