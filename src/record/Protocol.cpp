// Frame encoding and decoding for the record stream.
#include "record/Protocol.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace r3::wire {

Error FrameWriter::writeAll(const void *P, size_t N) {
  const auto *B = static_cast<const uint8_t *>(P);
  while (N > 0) {
    ssize_t W = Mode == SendMode::SocketNoSignal
                    ? ::send(Fd, B, N, MSG_NOSIGNAL)
                    : ::write(Fd, B, N);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return errnoError("record stream: write");
    B += W;
    N -= static_cast<size_t>(W);
  }
  return Error::success();
}

Error FrameWriter::begin(Type T, const MetaWriter &Meta, uint64_t BulkLength) {
  if (BulkLeft != 0)
    return Error::make(
        "record stream: a frame began before the last one's bulk ended");
  FrameHeader H{T, static_cast<uint32_t>(Meta.data().size()), BulkLength};
  uint8_t Raw[16];
  std::memcpy(Raw, &H.Kind, 4);
  std::memcpy(Raw + 4, &H.MetaLength, 4);
  std::memcpy(Raw + 8, &H.BulkLength, 8);
  R3_TRY(writeAll(Raw, sizeof(Raw)));
  R3_TRY(writeAll(Meta.data().data(), Meta.data().size()));
  BulkLeft = BulkLength;
  return Error::success();
}

Error FrameWriter::sendBulk(std::span<const uint8_t> Bytes) {
  if (Bytes.size() > BulkLeft)
    return Error::make(
        "record stream: more bulk bytes than the frame announced");
  BulkLeft -= Bytes.size();
  return writeAll(Bytes.data(), Bytes.size());
}

Error FrameWriter::send(Type T, const MetaWriter &Meta,
                        std::span<const uint8_t> Bulk) {
  R3_TRY(begin(T, Meta, Bulk.size()));
  return sendBulk(Bulk);
}

void enlargeSocketBuffers(int Fd) {
  int Bytes = 4 << 20;
  for (int Option : {SO_SNDBUF, SO_RCVBUF})
    ::setsockopt(Fd, SOL_SOCKET, Option, &Bytes, sizeof(Bytes));
}

Error readHeader(int Fd, FrameHeader &H, bool &AtEnd) {
  uint8_t Raw[16];
  ssize_t R;
  do
    R = ::read(Fd, Raw, 1);
  while (R < 0 && errno == EINTR);
  AtEnd = R == 0;
  if (AtEnd)
    return Error::success();
  if (R < 0)
    return errnoError("record stream: read");
  R3_TRY(readExactly(Fd, std::span(Raw + 1, sizeof(Raw) - 1)));
  std::memcpy(&H.Kind, Raw, 4);
  std::memcpy(&H.MetaLength, Raw + 4, 4);
  std::memcpy(&H.BulkLength, Raw + 8, 8);
  return Error::success();
}

} // namespace r3::wire
