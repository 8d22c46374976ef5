// Encoding and decoding of the r3 record ↔ recorded process contract.
#include "record/RecordEnv.h"

#include "support/StringUtil.h"

namespace r3 {

namespace {
std::string bound(const std::optional<uint64_t> &V) {
  return V ? std::to_string(*V) : "-";
}

std::string encodePatterns(const std::vector<std::string> &Patterns) {
  std::string S;
  for (const std::string &P : Patterns)
    S += std::to_string(P.size()) + ":" + P;
  return S;
}

Error malformed(const char *Name, const std::string &Value,
                const char *Expected) {
  return makeError("environment variable ", Name, "='", Value, "': expected ",
                   Expected, " (set by r3 record; do not set it by hand)");
}

Expected<uint64_t> number(const char *Name, const std::string &Text) {
  auto V = parseUnsigned(Text);
  if (!V)
    return malformed(Name, Text, "a non-negative integer");
  return *V;
}

Expected<std::vector<std::string>> decodePatterns(const std::string &S) {
  std::vector<std::string> Out;
  for (size_t Pos = 0; Pos < S.size();) {
    size_t Colon = S.find(':', Pos);
    auto N = Colon == std::string::npos
                 ? std::nullopt
                 : parseUnsigned(S.substr(Pos, Colon - Pos));
    if (!N || *N > S.size() - Colon - 1)
      return malformed(recordenv::Kernels, S,
                       "length-prefixed patterns (LEN:PATTERN...)");
    Out.push_back(S.substr(Colon + 1, *N));
    Pos = Colon + 1 + *N;
  }
  return Out;
}

Expected<std::optional<uint64_t>> optionalBound(const std::string &Text) {
  if (Text == "-")
    return std::optional<uint64_t>();
  auto V = parseUnsigned(Text);
  if (!V)
    return Error::make("bad bound");
  return std::optional<uint64_t>(*V);
}

std::vector<std::string> splitColons(const std::string &S) {
  std::vector<std::string> Parts(1);
  for (char C : S)
    if (C == ':')
      Parts.emplace_back();
    else
      Parts.back() += C;
  return Parts;
}

Expected<LaunchRange> decodeRange(const std::string &S) {
  std::vector<std::string> Parts = splitColons(S);
  const char *What = "FIRST:LAST:MAX, with '-' for an absent bound";
  if (Parts.size() != 3)
    return malformed(recordenv::Launches, S, What);
  LaunchRange R;
  auto First = parseUnsigned(Parts[0]);
  auto Last = optionalBound(Parts[1]);
  auto Max = optionalBound(Parts[2]);
  if (!First || !Last || !Max)
    return malformed(recordenv::Launches, S, What);
  R.First = *First;
  R.Last = *Last;
  R.MaxLaunches = *Max;
  return R;
}

Error decodeRing(const std::string &S, RecordEnv &E) {
  std::vector<std::string> Parts = splitColons(S);
  const char *What = "FD:SLOTS:SLOTBYTES";
  if (Parts.size() != 3)
    return malformed(recordenv::Ring, S, What);
  auto Fd = parseUnsigned(Parts[0]);
  auto Slots = parseUnsigned(Parts[1]);
  auto Bytes = parseUnsigned(Parts[2]);
  if (!Fd || !Slots || !Bytes || *Fd > 1u << 30 || *Slots > 1u << 20)
    return malformed(recordenv::Ring, S, What);
  E.RingFd = static_cast<int>(*Fd);
  E.RingSlots = static_cast<uint32_t>(*Slots);
  E.RingSlotBytes = *Bytes;
  return Error::success();
}

Error decodeMode(const std::string &S, RecordMode &Mode) {
  if (S == "record")
    Mode = RecordMode::Record;
  else if (S == "list")
    Mode = RecordMode::List;
  else
    return malformed(recordenv::Mode, S, "'record' or 'list'");
  return Error::success();
}
} // namespace

std::vector<std::pair<std::string, std::string>>
encodeRecordEnv(const RecordEnv &E) {
  const LaunchRange &R = E.Range;
  std::vector<std::pair<std::string, std::string>> Out = {
      {recordenv::Fd, std::to_string(E.StreamFd)},
      {recordenv::Mode, E.Mode == RecordMode::List ? "list" : "record"},
      {recordenv::Kernels, encodePatterns(E.Patterns)},
      {recordenv::Launches, std::to_string(R.First) + ":" + bound(R.Last) +
                                ":" + bound(R.MaxLaunches)},
      {recordenv::MaxBytes, std::to_string(E.MaxSnapshotBytes)},
      {recordenv::Memory, E.AllMemory ? "all" : "reachable"},
  };
  if (E.RingFd >= 0)
    Out.emplace_back(recordenv::Ring, std::to_string(E.RingFd) + ":" +
                                          std::to_string(E.RingSlots) + ":" +
                                          std::to_string(E.RingSlotBytes));
  return Out;
}

Expected<std::optional<RecordEnv>> decodeRecordEnv(const RawEnvLookup &Env) {
  const char *Fd = Env(recordenv::Fd);
  if (!Fd)
    return std::optional<RecordEnv>();
  RecordEnv E;
  uint64_t FdValue = 0;
  R3_TRY(moveInto(number(recordenv::Fd, Fd), FdValue));
  if (FdValue > 1u << 30)
    return malformed(recordenv::Fd, Fd, "a file descriptor");
  E.StreamFd = static_cast<int>(FdValue);
  if (const char *M = Env(recordenv::Mode))
    R3_TRY(decodeMode(M, E.Mode));
  if (const char *K = Env(recordenv::Kernels))
    R3_TRY(moveInto(decodePatterns(K), E.Patterns));
  if (const char *L = Env(recordenv::Launches))
    R3_TRY(moveInto(decodeRange(L), E.Range));
  else
    E.Range.MaxLaunches = 1;
  if (const char *B = Env(recordenv::MaxBytes))
    R3_TRY(moveInto(number(recordenv::MaxBytes, B), E.MaxSnapshotBytes));
  if (const char *Ring = Env(recordenv::Ring))
    R3_TRY(decodeRing(Ring, E));
  if (const char *M = Env(recordenv::Memory)) {
    std::string_view V = M;
    if (V != "all" && V != "reachable")
      return malformed(recordenv::Memory, M, "'reachable' or 'all'");
    E.AllMemory = V == "all";
  }
  return std::optional<RecordEnv>(std::move(E));
}

} // namespace r3
