// The frame codec (Frame.h).
#include "support/Frame.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace r3::wire {

MetaWriter &MetaWriter::raw(const void *P, size_t N) {
  const auto *B = static_cast<const uint8_t *>(P);
  Data.insert(Data.end(), B, B + N);
  return *this;
}

MetaWriter &MetaWriter::str(const std::string &S) {
  u64(S.size());
  return raw(S.data(), S.size());
}

MetaWriter &MetaWriter::f64(double V) {
  uint64_t Bits;
  std::memcpy(&Bits, &V, sizeof(V));
  return u64(Bits);
}

MetaWriter &MetaWriter::strs(const std::vector<std::string> &V) {
  u32(static_cast<uint32_t>(V.size()));
  for (const std::string &S : V)
    str(S);
  return *this;
}

MetaWriter &MetaWriter::bytes(std::span<const uint8_t> B) {
  u64(B.size());
  return raw(B.data(), B.size());
}

MetaWriter &MetaWriter::u64s(std::span<const uint64_t> V) {
  u64(V.size());
  return raw(V.data(), V.size() * sizeof(uint64_t));
}

bool MetaReader::take(void *Out, size_t N) {
  if (Failed || N > Data.size() - Pos) {
    Failed = true;
    return false;
  }
  if (N) // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(Out, Data.data() + Pos, N);
  Pos += N;
  return true;
}

uint32_t MetaReader::u32() {
  uint32_t V = 0;
  take(&V, sizeof(V));
  return V;
}

uint64_t MetaReader::u64() {
  uint64_t V = 0;
  take(&V, sizeof(V));
  return V;
}

int64_t MetaReader::i64() {
  int64_t V = 0;
  take(&V, sizeof(V));
  return V;
}

std::string MetaReader::str() {
  uint64_t N = u64();
  if (Failed || N > Data.size() - Pos) {
    Failed = true;
    return {};
  }
  std::string S(reinterpret_cast<const char *>(Data.data() + Pos), N);
  Pos += N;
  return S;
}

std::vector<uint8_t> MetaReader::bytes() {
  uint64_t N = u64();
  if (Failed || N > Data.size() - Pos) {
    Failed = true;
    return {};
  }
  std::vector<uint8_t> B(Data.begin() + Pos, Data.begin() + Pos + N);
  Pos += N;
  return B;
}

double MetaReader::f64() {
  uint64_t Bits = u64();
  double V;
  std::memcpy(&V, &Bits, sizeof(V));
  return V;
}

std::vector<std::string> MetaReader::strs() {
  // Each string costs at least its 8-byte length.
  std::vector<std::string> V(count(sizeof(uint64_t)));
  for (std::string &S : V)
    S = str();
  return V;
}

std::vector<uint64_t> MetaReader::u64s() {
  uint64_t N = u64();
  if (Failed || N > (Data.size() - Pos) / sizeof(uint64_t)) {
    Failed = true;
    return {};
  }
  std::vector<uint64_t> V(N);
  take(V.data(), N * sizeof(uint64_t));
  return V;
}

uint32_t MetaReader::count(size_t MinBytes) {
  uint32_t N = u32();
  if (Failed || (MinBytes && N > (Data.size() - Pos) / MinBytes)) {
    Failed = true;
    return 0;
  }
  return N;
}

Error MetaReader::finish(const char *What) const {
  if (Failed)
    return makeError(What, " message: truncated fields");
  if (Pos != Data.size())
    return makeError(What, " message: ", Data.size() - Pos,
                     " unexpected bytes");
  return Error::success();
}

namespace {
/// Reads Out whole; Before and Whole place it in a longer read, for the
/// message.
Error readPart(int Fd, std::span<uint8_t> Out, uint64_t Before,
               uint64_t Whole) {
  size_t Done = 0;
  while (Done < Out.size()) {
    ssize_t R = ::read(Fd, Out.data() + Done, Out.size() - Done);
    if (R < 0 && errno == EINTR)
      continue;
    if (R < 0)
      return errnoError("read");
    if (R == 0)
      return makeError("the stream ended in the middle of a frame (",
                       Before + Done, " of ", Whole, " bytes)");
    Done += static_cast<size_t>(R);
  }
  return Error::success();
}
} // namespace

Error readExactly(int Fd, std::span<uint8_t> Out) {
  return readPart(Fd, Out, 0, Out.size());
}

Error readGrowing(int Fd, uint64_t Length, std::vector<uint8_t> &Out) {
  constexpr uint64_t Step = 1ull << 20;
  Out.clear();
  while (Out.size() < Length) {
    size_t Have = Out.size();
    Out.resize(Have + std::min(Step, Length - Have));
    R3_TRY(readPart(Fd, std::span(Out).subspan(Have), Have, Length));
  }
  return Error::success();
}

RawHeader decodeHeader(std::span<const uint8_t, HeaderBytes> Raw) {
  RawHeader H;
  std::memcpy(&H.Type, Raw.data(), 4);
  std::memcpy(&H.MetaLength, Raw.data() + 4, 4);
  std::memcpy(&H.BulkLength, Raw.data() + 8, 8);
  return H;
}

std::array<uint8_t, HeaderBytes> encodeHeader(const RawHeader &H) {
  std::array<uint8_t, HeaderBytes> Raw;
  std::memcpy(Raw.data(), &H.Type, 4);
  std::memcpy(Raw.data() + 4, &H.MetaLength, 4);
  std::memcpy(Raw.data() + 8, &H.BulkLength, 8);
  return Raw;
}

Error checkHeader(const RawHeader &H, const FrameLimits &L,
                  const char *Protocol) {
  if (H.Type < L.FirstType || H.Type > L.LastType)
    return makeError(Protocol, ": not a frame of this protocol (type ", H.Type,
                     ", expected ", L.FirstType, " to ", L.LastType, ")");
  auto TooLong = [&](uint64_t Claimed, const char *Part, uint64_t Max) {
    return makeError(Protocol, ": a frame of type ", H.Type, " claims ",
                     Claimed, " ", Part,
                     " bytes, more than any of its frames carries (", Max,
                     ")");
  };
  if (H.MetaLength > L.MaxMeta)
    return TooLong(H.MetaLength, "meta", L.MaxMeta);
  if (H.BulkLength > L.MaxBulk)
    return TooLong(H.BulkLength, "bulk", L.MaxBulk);
  return Error::success();
}

Expected<std::optional<RawHeader>> readFrame(int Fd, const FrameLimits &L,
                                             const char *Protocol,
                                             std::vector<uint8_t> &Meta,
                                             std::vector<uint8_t> &Bulk) {
  uint8_t Raw[HeaderBytes];
  ssize_t First;
  do
    First = ::read(Fd, Raw, 1);
  while (First < 0 && errno == EINTR);
  if (First == 0)
    return std::optional<RawHeader>();
  Error E = First < 0 ? errnoError("read")
                      : readPart(Fd, std::span(Raw + 1, HeaderBytes - 1), 1,
                                 HeaderBytes);
  if (E)
    return makeError(Protocol, ": ", E.message());
  RawHeader H = decodeHeader(Raw);
  R3_TRY(checkHeader(H, L, Protocol));
  if (Error E = readGrowing(Fd, H.MetaLength, Meta))
    return makeError(Protocol, ": ", E.message());
  if (Error E = readGrowing(Fd, H.BulkLength, Bulk))
    return makeError(Protocol, ": ", E.message());
  return std::optional<RawHeader>(H);
}

namespace {
Error writeAll(int Fd, const void *P, size_t N) {
  const auto *B = static_cast<const uint8_t *>(P);
  while (N > 0) {
    ssize_t W = ::write(Fd, B, N);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return errnoError("write");
    B += W;
    N -= static_cast<size_t>(W);
  }
  return Error::success();
}
} // namespace

Error writeFrame(int Fd, uint32_t Type, const MetaWriter &Meta,
                 std::span<const uint8_t> Bulk) {
  std::array<uint8_t, HeaderBytes> Raw = encodeHeader(
      {Type, static_cast<uint32_t>(Meta.data().size()), Bulk.size()});
  R3_TRY(writeAll(Fd, Raw.data(), Raw.size()));
  R3_TRY(writeAll(Fd, Meta.data().data(), Meta.data().size()));
  return writeAll(Fd, Bulk.data(), Bulk.size());
}

} // namespace r3::wire
