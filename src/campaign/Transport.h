// How the coordinator's loop reaches its workers. A worker is a process on
// this node spoken to over pipes (Worker.h), or, under MPI, a rank of the
// job that relays the same messages to a worker process of its own
// (Mpi.h). The loop (EventLoop.cpp) sees only this interface: it sends jobs,
// waits on the descriptors the links give (pipes) and asks the others
// whether anything arrived (MPI), and restarts what can be restarted.
#pragma once

#include "campaign/WorkerProtocol.h"
#include "support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace r3 {

class WorkerProcess;

/// One worker as the coordinator sees it.
class WorkerLink {
public:
  virtual ~WorkerLink() = default;
  virtual Error send(std::vector<uint8_t> Message) = 0;
  /// A descriptor that becomes readable when a message arrives; -1 for a
  /// link that is asked with receive() on every turn of the loop (MPI).
  virtual int pollFd() const = 0;
  enum class Got { Message, Nothing, Closed };
  /// The next message, if one has arrived. A pipe reads one whole message
  /// (called once its descriptor is readable); MPI never blocks.
  virtual Expected<Got> receive(WorkerMessage &Out) = 0;
  /// Whether the loop may start the worker again after it died (a process
  /// on this node; not a rank of an MPI job, whose death ends the job).
  virtual bool restartable() const = 0;
  /// Asks the worker to exit and waits up to Seconds for it.
  virtual void shutdown(double Seconds) = 0;
};

/// Starts (or connects to) worker W.
using LinkFactory =
    std::function<Expected<std::unique_ptr<WorkerLink>>(unsigned W)>;

/// A worker process on this node, over its pipes.
std::unique_ptr<WorkerLink> pipeLink(std::unique_ptr<WorkerProcess> P);

} // namespace r3
