// The protocol between a campaign's coordinator and its workers. A worker
// owns replay servers (one per capture) and the source front end; the
// coordinator owns the search and the history and never touches a device
// (a faulting or hung candidate then kills a replay server, never the
// campaign, and MPI, which cannot survive a dead rank, never runs one).
// Messages are independent of their
// transport: each is a type, a JSON header and bulk bytes, framed by
// encodeMessage/decodeMessage; a pipe carries them between processes on one
// node, and a later transport (MPI) can carry the same bytes between nodes.
//
//   coordinator                       worker
//                                   ← Hello {device, pid}
//   Job {id, capture, candidate,   →
//        source to compile?}
//                                   ← Result {id, result, timings}
//   Shutdown                        →  (the worker exits)
//                                   ← Lost {why} | Stop {why}  (MPI ranks)
#pragma once

#include "compile/CompileSettings.h"
#include "replay/Candidate.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace r3 {

enum class WorkerMessageKind : uint32_t {
  Hello = 1,
  Job = 2,
  Result = 3,
  Shutdown = 4,
  /// From a rank relaying to its own worker process (MPI): that process
  /// died and another was started; the jobs it held are lost.
  Lost = 5,
  /// From a rank that was asked to stop (a signal): stop the campaign.
  Stop = 6,
};

/// A source the worker compiles to the candidate's code before running it,
/// with the candidate's compiler settings (on the host backend the front
/// end alone runs here: the candidate's pipeline and codegen level, which
/// its Candidate carries too, run in the replay server).
struct SourceJob {
  std::string Text;
  std::string FileName; ///< the original file's name (language, messages)
  std::vector<std::string> Flags; ///< clang flags: -I, -D, -std=
  CompileSettings Settings;
};

struct WorkerJob {
  uint64_t Id = 0;
  std::string Capture;
  Backend Target = Backend::Host;
  Candidate Work;
  std::optional<SourceJob> Source;
};

struct WorkerResult {
  uint64_t Id = 0;
  CandidateResult Result;
  std::string Device; ///< what ran it (the replay server's device)
  double EvalMs = 0;               ///< compile + runs, as the worker saw it
  double Started = 0, Finished = 0; ///< seconds since the epoch
};

struct WorkerHello {
  std::string Device; ///< what runs candidates: a CPU model, a GPU name
  int64_t Pid = 0;
};

/// One decoded message.
struct WorkerMessage {
  WorkerMessageKind Kind = WorkerMessageKind::Shutdown;
  WorkerHello Hello;
  WorkerJob Job;
  WorkerResult Result;
  std::string Text; ///< Lost, Stop: why
};

std::vector<uint8_t> encodeHello(const WorkerHello &H);
std::vector<uint8_t> encodeJob(const WorkerJob &J);
std::vector<uint8_t> encodeResult(const WorkerResult &R);
std::vector<uint8_t> encodeShutdown();
std::vector<uint8_t> encodeLost(const std::string &Why);
std::vector<uint8_t> encodeStop(const std::string &Why);
/// A whole message from its bytes (as encode* made them).
Expected<WorkerMessage> decodeMessage(std::span<const uint8_t> Bytes);

/// Pipe transport: writes a message whole.
Error writeMessage(int Fd, const std::vector<uint8_t> &Bytes);
/// Pipe transport: reads one whole message; none at a clean end of stream
/// (the other side closed the pipe between messages).
Expected<std::optional<WorkerMessage>> readMessage(int Fd);

} // namespace r3
