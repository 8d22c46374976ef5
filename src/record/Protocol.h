// The stream from a recorded process to `r3 record`. The injected library
// (CUDA) or runtime (host) cannot write HDF5 itself: it lives inside someone
// else's process, which may bring its own HDF5. So it sends frames over a pipe
// and the r3 record parent writes the capture (see CaptureSink.h).
//
// A frame is a 16-byte header {u32 type, u32 meta length, u64 bulk length},
// then the meta fields (fixed-width native integers; strings and small arrays
// length-prefixed), then the bulk bytes (a module image or a region's contents)
// which may be produced and sent chunk by chunk. Both ends run on one machine,
// so integers are in native byte order. This file needs only libc.
#pragma once

#include "support/Error.h"
#include "support/Frame.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3::wire {

inline constexpr uint32_t ProtocolVersion = 4;

enum class Type : uint32_t {
  Hello = 1,       ///< version, pid, device
  Module = 2,      ///< module id, kind; bulk: the image
  Kernel = 3,      ///< kernel id, module id, name, params, globals, attributes
  Launch = 4,      ///< launch id, kernel id, ordinal, dims, shared, params
  Region = 5,      ///< launch id, phase, index, base, size, kind, name; bulk
  Duration = 6,    ///< kernel id, launch id (or NoLaunch), nanoseconds
  Failure = 7,     ///< a message: the recording cannot be complete
  Done = 8,        ///< the recording is complete
  KernelStats = 9, ///< list mode: a kernel's name, launches, total duration
  Warning = 10,    ///< a message: the capture is written, but the user should
                   ///< know what it cannot hold (r3 record prints it)
  RingChunk = 11,  ///< slot, bytes: the next bytes of a Region frame sent
                   ///< through the bulk ring (Ring.h) instead of as bulk
};

inline constexpr uint64_t NoLaunch = ~0ull;

struct FrameHeader {
  Type Kind = Type::Done;
  uint32_t MetaLength = 0;
  uint64_t BulkLength = 0;
};

/// The sending end: writes frames to a file descriptor (a pipe), retrying short
/// writes and EINTR. A sender inside an application should use a socket and
/// MSG_NOSIGNAL, or ignore SIGPIPE, so that a dead r3 parent is an error here
/// rather than a signal that kills the application.
/// How a FrameWriter writes: write(2) on any fd, or send(2) with MSG_NOSIGNAL
/// on a socket, so that a dead reader is an EPIPE error and never a SIGPIPE
/// that would kill the application.
enum class SendMode { Write, SocketNoSignal };

class FrameWriter {
public:
  explicit FrameWriter(int Fd, SendMode Mode = SendMode::Write)
      : Fd(Fd), Mode(Mode) {}
  /// A whole frame.
  Error send(Type T, const MetaWriter &Meta,
             std::span<const uint8_t> Bulk = {});
  /// Starts a frame whose BulkLength bytes follow through sendBulk().
  Error begin(Type T, const MetaWriter &Meta, uint64_t BulkLength);
  Error sendBulk(std::span<const uint8_t> Bytes);
  /// Bulk bytes the frame begun last still owes (0 between frames).
  uint64_t bulkLeft() const { return BulkLeft; }

private:
  Error writeAll(const void *P, size_t N);
  int Fd;
  SendMode Mode;
  uint64_t BulkLeft = 0;
};

/// Asks for socket buffers of up to 4 MiB on both ends of a stream socket (the
/// kernel caps them at net.core.[rw]mem_max): the default of about 200 KiB
/// makes sender and receiver take turns, each waiting while the other copies.
void enlargeSocketBuffers(int Fd);

/// Reads a frame header; sets AtEnd (and returns success) on a clean end of
/// stream.
Error readHeader(int Fd, FrameHeader &H, bool &AtEnd);

} // namespace r3::wire
