// Campaign workers. A worker is a process (`r3 __tune-worker IN OUT`) that
// owns one replay server per capture and compiles sources for the
// candidates it is given: while the server runs one candidate, the worker
// compiles the next one's source, so the device is rarely idle. The
// coordinator keeps two jobs queued per worker and never touches a device.
#pragma once

#include "campaign/WorkerProtocol.h"
#include "support/Error.h"

#include <memory>
#include <string>
#include <sys/types.h>

namespace r3 {

/// The compile threads of a CUDA worker that has Cores to itself: the
/// cores less one for its runner, at least 1 and at most 12 (a front end
/// takes longer than most kernels' runs, so a GPU waits unless several
/// candidates compile at once; a 16-core node with one GPU: 12).
unsigned compileThreads(unsigned Cores);

/// The worker loop, on the given descriptors, until Shutdown or the end of
/// its input (its coordinator died: it stops its servers and exits), with
/// Compilers threads compiling queued jobs side by side.
Error runTuneWorker(int In, int Out, unsigned Compilers = 1);

/// The coordinator's handle of a worker process.
class WorkerProcess {
public:
  /// Spawns `r3 __tune-worker` (this executable) in a process group of its
  /// own, so that a terminal's ^C reaches only the coordinator, which
  /// decides what happens to in-flight work. A non-empty Gpu becomes the
  /// worker's CUDA_VISIBLE_DEVICES: its replay servers see that GPU alone.
  static Expected<std::unique_ptr<WorkerProcess>>
  spawn(unsigned Index, const std::string &Gpu = "", unsigned Compilers = 1);
  ~WorkerProcess();

  unsigned index() const { return Index; }
  pid_t pid() const { return Pid; }
  /// The descriptor to poll for its messages.
  int readFd() const { return FromWorker; }
  Error send(const std::vector<uint8_t> &Message);
  /// Asks it to exit, then waits up to Seconds before killing it.
  void shutdown(double Seconds);

private:
  WorkerProcess() = default;
  unsigned Index = 0;
  pid_t Pid = -1;
  int ToWorker = -1, FromWorker = -1;
};

} // namespace r3
