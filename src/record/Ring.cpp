// The bulk ring's shared memory and its two ends.
#include "record/Ring.h"

#include "record/Messages.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace r3::wire {

namespace {
Expected<uint8_t *> mapShared(int Fd, uint64_t Bytes) {
  void *P = ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  if (P == MAP_FAILED)
    return errnoError("cannot map the record ring (" + std::to_string(Bytes) +
                      " bytes of shared memory)");
  return static_cast<uint8_t *>(P);
}
} // namespace

Error checkRingGeometry(const RingGeometry &G) {
  if (G.Slots == 0 || G.SlotBytes == 0 || G.SlotBytes % 4096 != 0 ||
      G.bytes() > MaxRingBytes || G.bytes() / G.Slots != G.SlotBytes)
    return makeError("record ring: ", G.Slots, " slots of ", G.SlotBytes,
                     " bytes (slots must be whole pages, at most ",
                     MaxRingBytes, " bytes in all)");
  return Error::success();
}

Expected<BulkRing> BulkRing::create(RingGeometry G) {
  R3_TRY(checkRingGeometry(G));
  int Fd = ::memfd_create("r3-record-ring", 0); // inherited by the application
  if (Fd < 0)
    return errnoError("cannot create the record ring (memfd_create)");
  if (::ftruncate(Fd, static_cast<off_t>(G.bytes())) != 0) {
    Error E = errnoError("cannot size the record ring");
    ::close(Fd);
    return E;
  }
  auto P = mapShared(Fd, G.bytes());
  if (!P) {
    ::close(Fd);
    return P.takeError();
  }
  BulkRing R;
  R.Base = *P;
  R.Geometry = G;
  R.Fd = Fd;
  return R;
}

Expected<BulkRing> BulkRing::attach(int Fd, RingGeometry G) {
  Error Bad = checkRingGeometry(G);
  if (!Bad) {
    struct stat St {};
    if (::fstat(Fd, &St) != 0)
      Bad = errnoError("record ring: descriptor " + std::to_string(Fd));
    else if (static_cast<uint64_t>(St.st_size) < G.bytes())
      Bad = makeError("record ring: descriptor ", Fd, " holds ", St.st_size,
                      " bytes, not ", G.bytes());
  }
  Expected<uint8_t *> P =
      Bad ? Expected<uint8_t *>(std::move(Bad)) : mapShared(Fd, G.bytes());
  ::close(Fd);
  if (!P)
    return P.takeError();
  BulkRing R;
  R.Base = *P;
  R.Geometry = G;
  return R;
}

BulkRing &BulkRing::operator=(BulkRing &&O) noexcept {
  if (this != &O) {
    this->~BulkRing();
    Base = std::exchange(O.Base, nullptr);
    Geometry = O.Geometry;
    Fd = std::exchange(O.Fd, -1);
  }
  return *this;
}

BulkRing::~BulkRing() {
  if (Base)
    ::munmap(Base, Geometry.bytes());
  closeFd();
  Base = nullptr;
}

void BulkRing::closeFd() {
  if (Fd >= 0)
    ::close(Fd);
  Fd = -1;
}

// ---- the recorded process's end --------------------------------------------

RingWriter::RingWriter(BulkRing R, int Fd, FrameWriter &W)
    : Ring(std::move(R)), Fd(Fd), W(&W) {
  for (uint32_t I = Ring.geometry().Slots; I-- > 0;)
    Free.push_back(I);
}

Expected<uint32_t> RingWriter::acquire() {
  while (Free.empty()) {
    uint32_t Slot = 0;
    ssize_t N = ::recv(Fd, &Slot, sizeof(Slot), MSG_WAITALL);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return errnoError("record ring: waiting for a free slot");
    if (N != sizeof(Slot))
      return Error::make("record ring: r3 record closed the stream");
    if (Slot >= Ring.geometry().Slots)
      return makeError("record ring: r3 record gave back slot ", Slot, " of ",
                       Ring.geometry().Slots);
    Free.push_back(Slot);
  }
  uint32_t Slot = Free.back();
  Free.pop_back();
  return Slot;
}

Error RingWriter::post(uint32_t Slot, uint64_t Bytes) {
  return W->send(Type::RingChunk, encode(RingChunkMsg{Slot, Bytes}));
}

// ---- the parent's end -------------------------------------------------------

void RingReader::beginRegion(uint64_t Size) {
  Left = Size;
  Pending = 0;
}

Error RingReader::nextChunk() {
  FrameHeader H;
  bool AtEnd = false;
  R3_TRY(readHeader(Fd, H, AtEnd));
  if (AtEnd)
    return Error::make("the recorded process ended in the middle of a region "
                       "(no capture written)");
  bool Failure = H.Kind == Type::Failure && H.MetaLength <= (1u << 20);
  if ((H.Kind != Type::RingChunk || H.MetaLength > 64) && !Failure)
    return makeError("record stream: frame type ", uint32_t(H.Kind),
                     " where the next ring chunk of a region was due");
  if (H.BulkLength != 0)
    return Error::make("record stream: a ring chunk with bulk bytes");
  std::vector<uint8_t> Meta(H.MetaLength);
  R3_TRY(readExactly(Fd, Meta));
  if (Failure) { // the recording failed in the middle of the region
    R3_TRY(decodeFailure(Meta, this->Failure));
    return Error::make(this->Failure);
  }
  RingChunkMsg M;
  R3_TRY(decode(Meta, M));
  const RingGeometry &G = Ring->geometry();
  if (M.Slot >= G.Slots || M.Bytes == 0 || M.Bytes > G.SlotBytes ||
      M.Bytes > Left)
    return makeError("record stream: a ring chunk of ", M.Bytes,
                     " bytes in slot ", M.Slot, " (", G.Slots, " slots of ",
                     G.SlotBytes, " bytes; ", Left,
                     " bytes of the region left)");
  Slot = M.Slot;
  Offset = 0;
  Pending = M.Bytes;
  Left -= M.Bytes;
  return Error::success();
}

Error RingReader::giveBack() {
  for (;;) {
    ssize_t N = ::send(Fd, &Slot, sizeof(Slot), MSG_NOSIGNAL);
    if (N == sizeof(Slot))
      return Error::success();
    if (N < 0 && errno == EINTR)
      continue;
    // A recorded process that exited cannot take slots back; its stream's
    // end is reported by the next read.
    if (N < 0 && (errno == EPIPE || errno == ECONNRESET))
      return Error::success();
    return errnoError("record ring: giving back a slot");
  }
}

Error RingReader::read(std::span<uint8_t> Out) {
  while (!Out.empty()) {
    if (Pending == 0) {
      if (Left == 0)
        return Error::make("record stream: a region read past its end");
      R3_TRY(nextChunk());
    }
    uint64_t N = std::min<uint64_t>(Pending, Out.size());
    std::memcpy(Out.data(), Ring->slot(Slot) + Offset, N);
    Out = Out.subspan(N);
    Offset += N;
    Pending -= N;
    if (Pending == 0)
      R3_TRY(giveBack());
  }
  return Error::success();
}

} // namespace r3::wire
