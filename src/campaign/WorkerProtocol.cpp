// Coordinator <-> worker messages (see WorkerProtocol.h). A message is a
// 16-byte header (magic, kind, body length) and a body of meta fields
// (support/Frame.h); candidates and results reuse the
// replay server protocol's encodings, so the three layers agree on what a
// candidate is.
#include "campaign/WorkerProtocol.h"

#include "replay/ServerProtocol.h"
#include "support/Frame.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace r3 {

namespace {
constexpr uint32_t Magic = 0x6b773372; // "r3wk"
constexpr uint64_t MaxBody = 1ull << 32;

std::vector<uint8_t> frame(WorkerMessageKind K, const wire::MetaWriter &Body) {
  std::vector<uint8_t> Out(16);
  uint32_t Kind = static_cast<uint32_t>(K);
  uint64_t Length = Body.data().size();
  std::memcpy(Out.data(), &Magic, 4);
  std::memcpy(Out.data() + 4, &Kind, 4);
  std::memcpy(Out.data() + 8, &Length, 8);
  Out.insert(Out.end(), Body.data().begin(), Body.data().end());
  return Out;
}


Error decodeJob(wire::MetaReader &R, WorkerJob &J) {
  J.Id = R.u64();
  J.Capture = R.str();
  uint32_t Target = R.u32();
  std::vector<uint8_t> Meta = R.bytes(), Image = R.bytes();
  if (R.u32()) {
    SourceJob S;
    S.Text = R.str();
    S.FileName = R.str();
    S.Flags = R.strs();
    S.Settings = decodeSettings(R);
    J.Source = std::move(S);
  }
  R3_TRY(R.finish("worker job"));
  if (Target > static_cast<uint32_t>(Backend::Host))
    return makeError("worker protocol: a job for an unknown backend ", Target);
  J.Target = static_cast<Backend>(Target);
  return moveInto(decodeCandidate(Meta, std::move(Image)), J.Work);
}

Error decodeResultBody(wire::MetaReader &R, WorkerResult &Out) {
  Out.Id = R.u64();
  std::vector<uint8_t> Meta = R.bytes();
  Out.EvalMs = R.f64();
  Out.Started = R.f64();
  Out.Finished = R.f64();
  Out.Device = R.str();
  R3_TRY(R.finish("worker result"));
  return moveInto(decodeResult(Meta), Out.Result);
}
} // namespace

std::vector<uint8_t> encodeHello(const WorkerHello &H) {
  wire::MetaWriter W;
  W.str(H.Device).i64(H.Pid);
  return frame(WorkerMessageKind::Hello, W);
}

std::vector<uint8_t> encodeJob(const WorkerJob &J) {
  wire::MetaWriter W;
  W.u64(J.Id).str(J.Capture).u32(static_cast<uint32_t>(J.Target));
  W.bytes(encodeCandidate(J.Work).data()).bytes(J.Work.Image);
  W.u32(J.Source ? 1 : 0);
  if (J.Source) {
    const SourceJob &S = *J.Source;
    W.str(S.Text).str(S.FileName);
    W.strs(S.Flags);
    encodeSettings(W, S.Settings);
  }
  return frame(WorkerMessageKind::Job, W);
}

std::vector<uint8_t> encodeResult(const WorkerResult &R) {
  wire::MetaWriter W;
  W.u64(R.Id).bytes(encode(R.Result).data());
  W.f64(R.EvalMs);
  W.f64(R.Started);
  W.f64(R.Finished);
  W.str(R.Device);
  return frame(WorkerMessageKind::Result, W);
}

std::vector<uint8_t> encodeShutdown() {
  return frame(WorkerMessageKind::Shutdown, wire::MetaWriter());
}

std::vector<uint8_t> encodeLost(const std::string &Why) {
  wire::MetaWriter W;
  W.str(Why);
  return frame(WorkerMessageKind::Lost, W);
}

std::vector<uint8_t> encodeStop(const std::string &Why) {
  wire::MetaWriter W;
  W.str(Why);
  return frame(WorkerMessageKind::Stop, W);
}

Expected<WorkerMessage> decodeMessage(std::span<const uint8_t> Bytes) {
  uint32_t M = 0, Kind = 0;
  uint64_t Length = 0;
  if (Bytes.size() < 16)
    return makeError("worker protocol: a message of ", Bytes.size(),
                     " bytes is shorter than its header");
  std::memcpy(&M, Bytes.data(), 4);
  std::memcpy(&Kind, Bytes.data() + 4, 4);
  std::memcpy(&Length, Bytes.data() + 8, 8);
  if (M != Magic || Length != Bytes.size() - 16)
    return makeError("worker protocol: not a message of this protocol");
  WorkerMessage Out;
  Out.Kind = static_cast<WorkerMessageKind>(Kind);
  wire::MetaReader R(Bytes.subspan(16));
  switch (Out.Kind) {
  case WorkerMessageKind::Hello:
    Out.Hello.Device = R.str();
    Out.Hello.Pid = R.i64();
    R3_TRY(R.finish("worker hello"));
    return Out;
  case WorkerMessageKind::Job:
    R3_TRY(decodeJob(R, Out.Job));
    return Out;
  case WorkerMessageKind::Result:
    R3_TRY(decodeResultBody(R, Out.Result));
    return Out;
  case WorkerMessageKind::Shutdown:
    R3_TRY(R.finish("worker shutdown"));
    return Out;
  case WorkerMessageKind::Lost:
  case WorkerMessageKind::Stop:
    Out.Text = R.str();
    R3_TRY(R.finish("worker notice"));
    return Out;
  }
  return makeError("worker protocol: unknown message kind ", Kind);
}

Error writeMessage(int Fd, const std::vector<uint8_t> &Bytes) {
  size_t Done = 0;
  while (Done < Bytes.size()) {
    ssize_t N = ::write(Fd, Bytes.data() + Done, Bytes.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return errnoError("worker protocol: write");
    Done += static_cast<size_t>(N);
  }
  return Error::success();
}

Expected<std::optional<WorkerMessage>> readMessage(int Fd) {
  std::vector<uint8_t> Bytes(16);
  size_t Got = 0;
  while (Got < 16) {
    ssize_t N = ::read(Fd, Bytes.data() + Got, 16 - Got);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return errnoError("worker protocol: read");
    if (N == 0 && Got == 0)
      return std::optional<WorkerMessage>();
    if (N == 0)
      return makeError("worker protocol: the stream ended inside a message");
    Got += static_cast<size_t>(N);
  }
  uint64_t Length;
  std::memcpy(&Length, Bytes.data() + 8, 8);
  if (Length > MaxBody)
    return makeError("worker protocol: a message of ", Length,
                     " bytes is larger than any this protocol sends");
  std::vector<uint8_t> Body;
  if (Error E = wire::readGrowing(Fd, Length, Body))
    return makeError("worker protocol: ", E.message());
  Bytes.insert(Bytes.end(), Body.begin(), Body.end());
  auto M = decodeMessage(Bytes);
  if (!M)
    return M.takeError();
  return std::optional<WorkerMessage>(std::move(*M));
}

} // namespace r3
