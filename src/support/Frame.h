// The frame codec every r3 stream shares: the record stream (record/
// Protocol.h), the replay server protocol and the campaign's worker
// protocol. A frame is a 16-byte header {u32 type, u32 meta length, u64 bulk
// length}, then the meta fields (fixed-width native integers; strings and
// small arrays length-prefixed), then the bulk bytes. Both ends of every
// stream run on one machine (an MPI link carries whole messages between
// ranks of one kind of machine), so integers are in native byte order.
// Needs only libc: the injected recording library uses it too.
#pragma once

#include "support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace r3::wire {

/// Builds the meta fields of a frame.
class MetaWriter {
public:
  MetaWriter &u32(uint32_t V) { return raw(&V, sizeof(V)); }
  MetaWriter &u64(uint64_t V) { return raw(&V, sizeof(V)); }
  MetaWriter &i64(int64_t V) { return raw(&V, sizeof(V)); }
  /// A double by its bits (every protocol encodes doubles this way).
  MetaWriter &f64(double V);
  MetaWriter &str(const std::string &S);
  /// A u32 count, then each string.
  MetaWriter &strs(const std::vector<std::string> &V);
  MetaWriter &bytes(std::span<const uint8_t> B);
  MetaWriter &u64s(std::span<const uint64_t> V);
  const std::vector<uint8_t> &data() const { return Data; }

private:
  MetaWriter &raw(const void *P, size_t N);
  std::vector<uint8_t> Data;
};

/// Reads the meta fields of a frame; a read past the end sets a sticky failure
/// that error() reports once, so decoding code reads fields without checks.
class MetaReader {
public:
  explicit MetaReader(std::span<const uint8_t> Data) : Data(Data) {}
  uint32_t u32();
  uint64_t u64();
  int64_t i64();
  double f64();
  std::string str();
  /// strs()'s list; a count beyond what the frame holds is a read past the
  /// end (count()).
  std::vector<std::string> strs();
  std::vector<uint8_t> bytes();
  std::vector<uint64_t> u64s();
  /// A u32 element count, checked against the bytes left when every element
  /// takes at least MinBytes: a count the frame cannot hold is a read past
  /// the end (and gives 0), so that no container is sized by a corrupt count.
  uint32_t count(size_t MinBytes);
  /// An error if any read ran past the end or bytes are left over.
  Error finish(const char *What) const;

private:
  bool take(void *Out, size_t N);
  std::span<const uint8_t> Data;
  size_t Pos = 0;
  bool Failed = false;
};

/// The receiving end's primitive: reads exactly Out.size() bytes, or says why
/// not.
Error readExactly(int Fd, std::span<uint8_t> Out);
/// Reads Length bytes into Out (replacing what it held), growing Out as the
/// bytes arrive rather than all at once: a corrupt length from the other end
/// costs only the bytes that really come, not an allocation of its size.
Error readGrowing(int Fd, uint64_t Length, std::vector<uint8_t> &Out);

/// A frame header's fields as they arrived: claims of the other end, to be
/// checked (checkHeader) before anything is sized by them.
struct RawHeader {
  uint32_t Type = 0, MetaLength = 0;
  uint64_t BulkLength = 0;
};
inline constexpr size_t HeaderBytes = 16;

/// What the frames of one protocol may claim: their types, and the most
/// meta and bulk bytes any of them carries.
struct FrameLimits {
  uint32_t FirstType = 0, LastType = 0;
  uint64_t MaxMeta = 0, MaxBulk = 0;
};

RawHeader decodeHeader(std::span<const uint8_t, HeaderBytes> Raw);
/// The bytes of a header, as writeFrame sends them (and as tests and seed
/// corpora forge them).
std::array<uint8_t, HeaderBytes> encodeHeader(const RawHeader &H);
/// An error, prefixed with Protocol, when H claims a type or lengths that L
/// does not allow.
Error checkHeader(const RawHeader &H, const FrameLimits &L,
                  const char *Protocol);
/// Reads one whole frame from Fd: its header, checked against L, then its
/// meta and bulk bytes, each buffer growing as the bytes arrive
/// (readGrowing). None when the stream ends cleanly, before a frame's
/// first byte; errors are prefixed with Protocol.
Expected<std::optional<RawHeader>> readFrame(int Fd, const FrameLimits &L,
                                             const char *Protocol,
                                             std::vector<uint8_t> &Meta,
                                             std::vector<uint8_t> &Bulk);

/// Writes a whole frame (header, meta, bulk) to Fd, retrying short writes
/// and EINTR.
Error writeFrame(int Fd, uint32_t Type, const MetaWriter &Meta,
                 std::span<const uint8_t> Bulk = {});

} // namespace r3::wire
