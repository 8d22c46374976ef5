// The protocol between a replay client (r3 replay, a tune worker) and a replay
// server process, the same for both backends. It uses r3's frame codec
// (support/Frame.h: a 16-byte header, meta fields, bulk bytes) over a pipe
// pair. A conversation:
//
//   client                          server
//   Open {capture, scratch, limits} → Opened {backend, sandbox} | Error
//   Evaluate {candidate; bulk code} → Running {compile ms}  (compile done)
//                                   → Tick (a run starts) ...
//                                   → Result {result}
//                                   | Result (compile error; no Running)
//                                   | Error (the capture cannot be replayed)
//
// Running tells the client that the runs have started, so that its timeout
// clock switches from the compile deadline to the run deadline; each Tick
// restarts the run deadline, so a run that passes the per-run timeout is
// killed then, not after the whole budget of runs. A server that
// dies mid-conversation is a crashed candidate, not a protocol error.
#pragma once

#include "support/Frame.h"
#include "replay/Candidate.h"
#include "support/Error.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

/// The frame types of the replay server protocol (values distinct from the
/// record stream's, so a crossed pipe is recognized).
enum class ServerFrame : uint32_t {
  Open = 101,
  Opened = 102,
  Evaluate = 103,
  Running = 104,
  Result = 105,
  Error = 106,
  Tick = 107,
};

inline constexpr uint32_t ServerProtocolVersion = 3;

struct OpenMsg {
  std::string CapturePath;
  std::string ScratchDir;
  uint64_t AddressSpaceBytes = 0; ///< RLIMIT_AS; 0: none
  double CpuSeconds = 600;        ///< RLIMIT_CPU soft limit until Evaluate
};

struct OpenedMsg {
  Backend Source = Backend::Host;
  std::string Sandbox; ///< "landlock" or "rlimits"
  std::string Device;  ///< what runs candidates: a GPU's or a CPU's name
};

/// Sent when the candidate compiled and its runs start.
using RunningMsg = CompiledInfo;

wire::MetaWriter encode(const OpenMsg &M);
wire::MetaWriter encode(const OpenedMsg &M);
wire::MetaWriter encode(const RunningMsg &M);
wire::MetaWriter encodeError(const std::string &Message);
/// The candidate's meta fields; its Image travels as the frame's bulk.
wire::MetaWriter encodeCandidate(const Candidate &C);
wire::MetaWriter encode(const CandidateResult &R);

Expected<OpenMsg> decodeOpen(std::span<const uint8_t> Meta);
Expected<OpenedMsg> decodeOpened(std::span<const uint8_t> Meta);
Expected<RunningMsg> decodeRunning(std::span<const uint8_t> Meta);
Expected<std::string> decodeError(std::span<const uint8_t> Meta);
/// The candidate from its meta fields and the frame's bulk (its code).
Expected<Candidate> decodeCandidate(std::span<const uint8_t> Meta,
                                    std::vector<uint8_t> Bulk);
Expected<CandidateResult> decodeResult(std::span<const uint8_t> Meta);

/// A received frame, meta and bulk read whole.
struct ServerFrameData {
  ServerFrame Kind = ServerFrame::Error;
  std::vector<uint8_t> Meta;
  std::vector<uint8_t> Bulk;
};

/// What readFrame found.
enum class ReadStatus {
  Frame,   ///< a whole frame
  End,     ///< the other end closed the pipe before a frame began
  TimedOut ///< the deadline passed first
};

using ServerClock = std::chrono::steady_clock;

/// Reads one whole frame from Fd, waiting at most until Deadline (forever when
/// none). A stream that ends inside a frame is an error.
Expected<ReadStatus> readFrame(int Fd,
                               std::optional<ServerClock::time_point> Deadline,
                               ServerFrameData &Out);

/// Sends a frame of the replay protocol.
Error sendFrame(int Fd, ServerFrame Kind, const wire::MetaWriter &Meta,
                std::span<const uint8_t> Bulk = {});

/// The name of a frame type, for messages.
const char *serverFrameName(ServerFrame K);

} // namespace r3
