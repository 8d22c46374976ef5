// Region copies into ring slots or pinned staging, and the change test.
#include "record/cuda/Snapshot.h"

#include "record/Messages.h"
#include "record/cuda/Driver.h"

#include <algorithm>
#include <cstring>

namespace r3::cuda {

Snapshot::Snapshot(std::vector<RegionInfo> Infos, SnapshotOut Out,
                   SnapshotIo Io)
    : Out(Out), Io(Io) {
  if (Out.Ring)
    this->Io.ChunkBytes =
        std::min(this->Io.ChunkBytes, Out.Ring->ring().geometry().SlotBytes);
  for (RegionInfo &I : Infos)
    Regions.push_back({std::move(I), {}});
}

Snapshot::~Snapshot() {
  if (Staging)
    Io.Free(Staging);
}

Error Snapshot::stage() {
  if (Staging)
    return Error::success();
  void *P = nullptr;
  R3_TRY(moveInto(Io.Allocate(Io.ChunkBytes), P));
  Staging = static_cast<uint8_t *>(P);
  return Error::success();
}

/// N bytes at Offset of R, in a ring slot when they are to be sent through
/// the ring (ToRing) or when slots take copies directly, else in staging.
Expected<Snapshot::Piece> Snapshot::read(const SnapshotRegion &R,
                                         uint64_t Offset, uint64_t N,
                                         bool ToRing) {
  uint64_t Src = R.Info.Base + Offset;
  Piece P;
  if (Out.Ring && (ToRing || Out.CopyIntoRing)) {
    R3_TRY(moveInto(Out.Ring->acquire(), P.Slot));
    P.Bytes = Out.Ring->ring().slot(P.Slot);
    P.InRing = true;
  }
  Error E = Error::success();
  if (P.InRing && Out.CopyIntoRing) {
    E = Io.Copy(P.Bytes, Src, N);
  } else {
    E = stage();
    if (!E)
      E = Io.Copy(Staging, Src, N);
    if (!E && P.InRing)
      std::memcpy(P.Bytes, Staging, N);
    else if (!E)
      P.Bytes = Staging;
  }
  if (E) {
    if (P.InRing)
      Out.Ring->release(P.Slot);
    return E;
  }
  return P;
}

Error Snapshot::send(const Piece &P, uint64_t N) {
  if (P.InRing)
    return Out.Ring->post(P.Slot, N);
  return Out.Stream->sendBulk(std::span(P.Bytes, N));
}

Error Snapshot::sendRegion(uint64_t LaunchId, Phase Side, size_t Index,
                           SnapshotRegion &R) {
  wire::RegionMsg M;
  M.LaunchId = LaunchId;
  M.Side = Side;
  M.Index = Index;
  M.Info = R.Info;
  M.ViaRing = Out.Ring != nullptr;
  if (M.ViaRing)
    R3_TRY(Out.Stream->send(wire::Type::Region, wire::encode(M)));
  else
    R3_TRY(Out.Stream->begin(wire::Type::Region, wire::encode(M), R.Info.Size));
  if (Side == Phase::Pre)
    R.Before.clear();
  for (uint64_t Off = 0; Off < R.Info.Size; Off += Io.ChunkBytes) {
    uint64_t N = std::min(Io.ChunkBytes, R.Info.Size - Off);
    Piece P;
    R3_TRY(moveInto(read(R, Off, N, true), P));
    if (Side == Phase::Pre)
      R.Before.push_back(hashPiece(std::span(P.Bytes, N)));
    R3_TRY(send(P, N));
  }
  return Error::success();
}

Error Snapshot::sendPre(uint64_t LaunchId) {
  for (size_t I = 0; I < Regions.size(); ++I)
    R3_TRY(sendRegion(LaunchId, Phase::Pre, I, Regions[I]));
  return Error::success();
}

Expected<bool> Snapshot::changed(const SnapshotRegion &R) {
  size_t K = 0;
  for (uint64_t Off = 0; Off < R.Info.Size; Off += Io.ChunkBytes, ++K) {
    uint64_t N = std::min(Io.ChunkBytes, R.Info.Size - Off);
    Piece P;
    R3_TRY(moveInto(read(R, Off, N, false), P));
    bool Differs =
        K >= R.Before.size() || hashPiece(std::span(P.Bytes, N)) != R.Before[K];
    if (P.InRing)
      Out.Ring->release(P.Slot);
    if (Differs)
      return true;
  }
  return false;
}

Error Snapshot::sendPost(uint64_t LaunchId) {
  for (size_t I = 0; I < Regions.size(); ++I) {
    bool Changed = false;
    R3_TRY(moveInto(changed(Regions[I]), Changed));
    if (Changed)
      R3_TRY(sendRegion(LaunchId, Phase::Post, I, Regions[I]));
  }
  return Error::success();
}

} // namespace r3::cuda
