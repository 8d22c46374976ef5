// Encoding and decoding of the replay server protocol's frames, and reading a
// frame against a deadline.
#include "replay/ServerProtocol.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <poll.h>
#include <unistd.h>

namespace r3 {

namespace {
using wire::MetaReader;
using wire::MetaWriter;

/// What the protocol's frames may claim: larger ones are a broken stream,
/// not a candidate (a result's meta holds at most two million run times).
constexpr wire::FrameLimits Limits{101, 107, 64ull << 20, 4ull << 30};
constexpr int64_t NoValue = INT64_MIN;

void optI64(MetaWriter &W, const std::optional<int64_t> &V) {
  W.i64(V ? *V : NoValue);
}

std::optional<int64_t> optI64(MetaReader &R) {
  int64_t V = R.i64();
  if (V == NoValue)
    return std::nullopt;
  return V;
}

void dims(MetaWriter &W, const std::optional<Dim3> &D) {
  W.u32(D.has_value());
  Dim3 V = D.value_or(Dim3{0, 0, 0});
  W.u32(V[0]).u32(V[1]).u32(V[2]);
}

std::optional<Dim3> dims(MetaReader &R) {
  bool Has = R.u32() != 0;
  Dim3 V;
  V[0] = R.u32();
  V[1] = R.u32();
  V[2] = R.u32();
  if (!Has)
    return std::nullopt;
  return V;
}

/// An enum field that must be below Count.
template <typename E> bool enumField(MetaReader &R, uint32_t Count, E &Out) {
  uint32_t V = R.u32();
  Out = static_cast<E>(V);
  return V < Count;
}

void encodeVerify(MetaWriter &W, const VerifySettings &S) {
  W.u32(static_cast<uint32_t>(S.Tolerance));
  W.f64(S.Value);
  W.u32(static_cast<uint32_t>(S.Type)).u32(static_cast<uint32_t>(S.Poison));
}

bool decodeVerify(MetaReader &R, VerifySettings &S) {
  bool Ok = enumField(R, 4, S.Tolerance);
  S.Value = R.f64();
  Ok &= enumField(R, 3, S.Type);
  Ok &= enumField(R, 3, S.Poison);
  return Ok;
}

Error badEnum(const char *What) {
  return makeError("replay server protocol: ", What,
                   " message: a field out of range");
}

/// Reads exactly Out.size() bytes, waiting at most until Deadline.
/// Where a read stands in its frame part, for messages: the bytes read
/// before it and the part's whole length (0: the read is the whole part).
struct PartProgress {
  uint64_t Before = 0, Whole = 0;
};

Expected<ReadStatus> readBefore(int Fd,
                                std::optional<ServerClock::time_point> Deadline,
                                std::span<uint8_t> Out, bool FrameStart,
                                PartProgress In = {}) {
  size_t Done = 0;
  while (Done < Out.size()) {
    int Wait = -1;
    if (Deadline) {
      auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *Deadline - ServerClock::now());
      if (Left.count() <= 0)
        return ReadStatus::TimedOut;
      Wait = static_cast<int>(std::min<int64_t>(Left.count() + 1, INT_MAX));
    }
    pollfd P{Fd, POLLIN, 0};
    int N = ::poll(&P, 1, Wait);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return errnoError("replay server protocol: poll");
    if (N == 0)
      continue; // the deadline check above decides
    ssize_t R = ::read(Fd, Out.data() + Done, Out.size() - Done);
    if (R < 0 && errno == EINTR)
      continue;
    if (R < 0)
      return errnoError("replay server protocol: read");
    if (R == 0) {
      if (FrameStart && Done == 0)
        return ReadStatus::End;
      return makeError("replay server protocol: the stream ended inside a "
                       "frame (",
                       In.Before + Done, " of ",
                       In.Whole ? In.Whole : Out.size(), " bytes)");
    }
    Done += static_cast<size_t>(R);
  }
  return ReadStatus::Frame;
}

/// Reads a frame part of Length bytes into Out, growing Out as the bytes
/// arrive rather than trusting the header's length up front: a corrupt
/// header that claims gigabytes costs only the bytes that really come.
Expected<ReadStatus> readPart(int Fd,
                              std::optional<ServerClock::time_point> Deadline,
                              uint64_t Length, std::vector<uint8_t> &Out) {
  constexpr uint64_t Step = 1ull << 20;
  Out.clear();
  while (Out.size() < Length) {
    size_t Have = Out.size();
    Out.resize(Have + std::min(Step, Length - Have));
    auto S = readBefore(Fd, Deadline, std::span(Out).subspan(Have),
                        /*FrameStart=*/false, {Have, Length});
    if (!S || *S != ReadStatus::Frame)
      return S;
  }
  return ReadStatus::Frame;
}
} // namespace

const char *serverFrameName(ServerFrame K) {
  switch (K) {
  case ServerFrame::Open:
    return "open";
  case ServerFrame::Opened:
    return "opened";
  case ServerFrame::Evaluate:
    return "evaluate";
  case ServerFrame::Running:
    return "running";
  case ServerFrame::Result:
    return "result";
  case ServerFrame::Error:
    return "error";
  case ServerFrame::Tick:
    return "tick";
  }
  return "unknown";
}

MetaWriter encode(const OpenMsg &M) {
  MetaWriter W;
  W.u32(ServerProtocolVersion).str(M.CapturePath).str(M.ScratchDir);
  W.u64(M.AddressSpaceBytes);
  W.f64(M.CpuSeconds);
  return W;
}

Expected<OpenMsg> decodeOpen(std::span<const uint8_t> Meta) {
  MetaReader R(Meta);
  uint32_t Version = R.u32();
  OpenMsg M;
  M.CapturePath = R.str();
  M.ScratchDir = R.str();
  M.AddressSpaceBytes = R.u64();
  M.CpuSeconds = R.f64();
  R3_TRY(R.finish("open"));
  if (Version != ServerProtocolVersion)
    return makeError("replay server protocol: version ", Version,
                     " from the client, expected ", ServerProtocolVersion,
                     " (the server is another r3 build)");
  return M;
}

MetaWriter encode(const OpenedMsg &M) {
  MetaWriter W;
  W.u32(static_cast<uint32_t>(M.Source)).str(M.Sandbox).str(M.Device);
  return W;
}

Expected<OpenedMsg> decodeOpened(std::span<const uint8_t> Meta) {
  MetaReader R(Meta);
  OpenedMsg M;
  bool Ok = enumField(R, 2, M.Source);
  M.Sandbox = R.str();
  M.Device = R.str();
  R3_TRY(R.finish("opened"));
  if (!Ok)
    return badEnum("opened");
  return M;
}

MetaWriter encode(const RunningMsg &M) {
  MetaWriter W;
  W.f64(M.CompileMs);
  W.str(M.Pipeline).i64(M.CodegenOpt).u32(M.Poisoned);
  return W;
}

Expected<RunningMsg> decodeRunning(std::span<const uint8_t> Meta) {
  MetaReader R(Meta);
  RunningMsg M;
  M.CompileMs = R.f64();
  M.Pipeline = R.str();
  M.CodegenOpt = static_cast<int>(R.i64());
  M.Poisoned = R.u32() != 0;
  R3_TRY(R.finish("running"));
  return M;
}

MetaWriter encodeError(const std::string &Message) {
  MetaWriter W;
  W.str(Message);
  return W;
}

Expected<std::string> decodeError(std::span<const uint8_t> Meta) {
  MetaReader R(Meta);
  std::string M = R.str();
  R3_TRY(R.finish("error"));
  return M;
}

MetaWriter encodeCandidate(const Candidate &C) {
  MetaWriter W;
  std::vector<uint64_t> Launches(C.Launches.begin(), C.Launches.end());
  W.str(C.Kernel).u64s(Launches).u32(static_cast<uint32_t>(C.Code));
  W.str(C.Pipeline).i64(C.CodegenOpt);
  dims(W, C.Grid);
  dims(W, C.Block);
  W.str(C.GridRule);
  W.strs(C.ParamNames);
  optI64(W, C.DynamicShared ? std::optional<int64_t>(*C.DynamicShared)
                            : std::nullopt);
  W.u32(static_cast<uint32_t>(C.Cache));
  W.u32(C.Warmup).u32(C.Repetitions).u32(C.MinRepetitions);
  W.f64(C.TargetCi);
  W.f64(C.TimeoutSeconds);
  W.u32(C.FlushL2);
  encodeVerify(W, C.Verify);
  W.u32(C.DeterminismRuns);
  W.u32(C.GridPerSm);
  return W;
}

Expected<Candidate> decodeCandidate(std::span<const uint8_t> Meta,
                                    std::vector<uint8_t> Bulk) {
  MetaReader R(Meta);
  Candidate C;
  C.Kernel = R.str();
  for (uint64_t L : R.u64s())
    C.Launches.push_back(static_cast<uint32_t>(L));
  bool Ok = enumField(R, 3, C.Code);
  C.Pipeline = R.str();
  C.CodegenOpt = static_cast<int>(R.i64());
  C.Grid = dims(R);
  C.Block = dims(R);
  C.GridRule = R.str();
  C.ParamNames = R.strs();
  if (auto Shared = optI64(R))
    C.DynamicShared = static_cast<uint32_t>(*Shared);
  Ok &= enumField(R, 4, C.Cache);
  C.Warmup = R.u32();
  C.Repetitions = R.u32();
  C.MinRepetitions = R.u32();
  C.TargetCi = R.f64();
  C.TimeoutSeconds = R.f64();
  C.FlushL2 = R.u32() != 0;
  Ok &= decodeVerify(R, C.Verify);
  C.DeterminismRuns = R.u32();
  C.GridPerSm = R.u32();
  R3_TRY(R.finish("evaluate"));
  if (!Ok)
    return badEnum("evaluate");
  C.Image = std::move(Bulk);
  return C;
}

MetaWriter encode(const CandidateResult &Res) {
  MetaWriter W;
  W.u32(Res.Verified).u32(static_cast<uint32_t>(Res.Failure)).str(Res.Message);
  W.u64s(Res.TimesNs);
  W.f64(Res.CompileMs);
  optI64(W, Res.Registers);
  optI64(W, Res.Spills);
  optI64(W, Res.SharedBytes);
  W.str(Res.Pipeline).i64(Res.CodegenOpt).u32(Res.Poisoned).str(Res.Sandbox);
  W.u32(Res.DeviceLost);
  W.f64(Res.LoadMs);
  W.f64(Res.RestoreMs);
  W.f64(Res.VerifyMs);
  W.u64s(Res.EventTimesNs).str(Res.Timer);
  W.f64(Res.BusyMs);
  W.str(Res.Nondeterminism).u32(Res.NondeterminismCovered);
  return W;
}

Expected<CandidateResult> decodeResult(std::span<const uint8_t> Meta) {
  MetaReader R(Meta);
  CandidateResult Res;
  Res.Verified = R.u32() != 0;
  bool Ok = enumField(R, 6, Res.Failure);
  Res.Message = R.str();
  Res.TimesNs = R.u64s();
  Res.CompileMs = R.f64();
  Res.Registers = optI64(R);
  Res.Spills = optI64(R);
  Res.SharedBytes = optI64(R);
  Res.Pipeline = R.str();
  Res.CodegenOpt = static_cast<int>(R.i64());
  Res.Poisoned = R.u32() != 0;
  Res.Sandbox = R.str();
  Res.DeviceLost = R.u32() != 0;
  Res.LoadMs = R.f64();
  Res.RestoreMs = R.f64();
  Res.VerifyMs = R.f64();
  Res.EventTimesNs = R.u64s();
  Res.Timer = R.str();
  Res.BusyMs = R.f64();
  Res.Nondeterminism = R.str();
  Res.NondeterminismCovered = R.u32() != 0;
  R3_TRY(R.finish("result"));
  if (!Ok)
    return badEnum("result");
  return Res;
}

Error sendFrame(int Fd, ServerFrame Kind, const MetaWriter &Meta,
                std::span<const uint8_t> Bulk) {
  if (Error E = wire::writeFrame(Fd, static_cast<uint32_t>(Kind), Meta, Bulk))
    return makeError("replay server protocol: sending ", serverFrameName(Kind),
                     ": ", E.message());
  return Error::success();
}

Expected<ReadStatus> readFrame(int Fd,
                               std::optional<ServerClock::time_point> Deadline,
                               ServerFrameData &Out) {
  uint8_t Raw[wire::HeaderBytes];
  auto S = readBefore(Fd, Deadline, Raw, /*FrameStart=*/true);
  if (!S || *S != ReadStatus::Frame)
    return S;
  wire::RawHeader H = wire::decodeHeader(Raw);
  R3_TRY(wire::checkHeader(H, Limits, "replay server protocol"));
  Out.Kind = static_cast<ServerFrame>(H.Type);
  S = readPart(Fd, Deadline, H.MetaLength, Out.Meta);
  if (!S || *S != ReadStatus::Frame)
    return S;
  return readPart(Fd, Deadline, H.BulkLength, Out.Bulk);
}

} // namespace r3
