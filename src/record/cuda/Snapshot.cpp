// Region copies through pinned staging.
#include "record/cuda/Snapshot.h"

#include "record/Messages.h"
#include "record/cuda/Driver.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>

namespace r3::cuda {

namespace {
wire::MetaWriter regionMeta(uint64_t LaunchId, Phase Side, size_t Index,
                            const RegionInfo &Info) {
  wire::RegionMsg M;
  M.LaunchId = LaunchId;
  M.Side = Side;
  M.Index = Index;
  M.Info = Info;
  return wire::encode(M);
}
} // namespace

Snapshot::Snapshot(std::vector<RegionInfo> Infos, SnapshotIo Io) : Io(Io) {
  for (RegionInfo &I : Infos)
    Regions.push_back({std::move(I), nullptr});
}

Snapshot::~Snapshot() {
  for (SnapshotRegion &R : Regions)
    if (R.Pre)
      ::munmap(R.Pre, R.Info.Size);
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

Error Snapshot::copyPre(wire::FrameWriter &W, SnapshotRegion &R) {
  void *P = ::mmap(nullptr, R.Info.Size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (P == MAP_FAILED)
    return errnoError("cannot map " + formatBytes(R.Info.Size) +
                      " to copy a region before the recorded launch");
  R.Pre = static_cast<uint8_t *>(P);
  // Every page of the copy is touched once, in order: huge pages take 1/512
  // of the faults (advice only; without transparent huge pages it is a no-op).
  ::madvise(P, R.Info.Size, MADV_HUGEPAGE);
  for (uint64_t Off = 0; Off < R.Info.Size; Off += Io.ChunkBytes) {
    uint64_t N = std::min(Io.ChunkBytes, R.Info.Size - Off);
    R3_TRY(Io.Copy(Staging, R.Info.Base + Off, N));
    std::memcpy(R.Pre + Off, Staging, N);
    R3_TRY(W.sendBulk(std::span(Staging, N)));
  }
  return Error::success();
}

Error Snapshot::sendPre(wire::FrameWriter &W, uint64_t LaunchId) {
  R3_TRY(stage());
  for (size_t I = 0; I < Regions.size(); ++I) {
    const RegionInfo &Info = Regions[I].Info;
    R3_TRY(W.begin(wire::Type::Region,
                   regionMeta(LaunchId, Phase::Pre, I, Info), Info.Size));
    R3_TRY(copyPre(W, Regions[I]));
  }
  return Error::success();
}

Expected<bool> Snapshot::changed(const SnapshotRegion &R) {
  for (uint64_t Off = 0; Off < R.Info.Size; Off += Io.ChunkBytes) {
    uint64_t N = std::min(Io.ChunkBytes, R.Info.Size - Off);
    R3_TRY(Io.Copy(Staging, R.Info.Base + Off, N));
    if (std::memcmp(R.Pre + Off, Staging, N) != 0)
      return true;
  }
  return false;
}

Error Snapshot::resend(wire::FrameWriter &W, const SnapshotRegion &R) {
  for (uint64_t Off = 0; Off < R.Info.Size; Off += Io.ChunkBytes) {
    uint64_t N = std::min(Io.ChunkBytes, R.Info.Size - Off);
    R3_TRY(Io.Copy(Staging, R.Info.Base + Off, N));
    R3_TRY(W.sendBulk(std::span(Staging, N)));
  }
  return Error::success();
}

Error Snapshot::sendPost(wire::FrameWriter &W, uint64_t LaunchId) {
  for (size_t I = 0; I < Regions.size(); ++I) {
    bool Changed = false;
    R3_TRY(moveInto(changed(Regions[I]), Changed));
    if (!Changed)
      continue;
    const RegionInfo &Info = Regions[I].Info;
    R3_TRY(W.begin(wire::Type::Region,
                   regionMeta(LaunchId, Phase::Post, I, Info), Info.Size));
    R3_TRY(resend(W, Regions[I]));
  }
  return Error::success();
}

} // namespace r3::cuda
