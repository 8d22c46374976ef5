// The snapshot of one recorded call of a host kernel. Which memory is taken:
//   1. the region each non-null pointer argument points into (a tracked heap
//      block or anonymous mapping, or a registered global; a pointer one past
//      the end of an allocation counts as pointing into it);
//   2. the kernel's globals (r3_host_kernel.globals);
//   3. transitively, every known region that an 8-byte-aligned word inside a
//      region already taken points into (the arrays a struct of pointers
//      holds, the nodes of a list).
// A pointer argument into memory r3 does not know (a stack array, memory
// allocated before recording started) refuses the capture, as does a total
// beyond the size cap (--max-bytes; 4 GiB by default). The bytes of every
// region are copied before the call; after it, a region is stored again
// only if its bytes differ from the copy (an exact comparison).
#include "record/host/Runtime.h"

#include "record/Messages.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace r3::host {

namespace {
using namespace wire;

std::string hex(uint64_t V) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%llx", static_cast<unsigned long long>(V));
  return Buf;
}

const KnownMemory *containing(const std::vector<KnownMemory> &Known,
                              uint64_t Address) {
  auto It = std::upper_bound(
      Known.begin(), Known.end(), Address,
      [](uint64_t A, const KnownMemory &M) { return A < M.Base; });
  if (It == Known.begin())
    return nullptr;
  --It;
  if (Address - It->Base < std::max<uint64_t>(It->Size, 1))
    return &*It;
  return nullptr;
}

/// The region a pointer argument points into: containing it, or ending
/// exactly at it (an end pointer).
const KnownMemory *argumentRegion(const std::vector<KnownMemory> &Known,
                                  uint64_t Address) {
  if (const KnownMemory *M = containing(Known, Address))
    return M;
  const KnownMemory *M = containing(Known, Address - 1);
  return M && M->Base + M->Size == Address ? M : nullptr;
}

/// Collects regions, checking the size cap as they come.
class Collector {
public:
  Collector(const std::vector<KnownMemory> &Known, PendingCall &P,
            uint64_t MaxBytes)
      : Known(Known), P(P), MaxBytes(MaxBytes), Taken(Known.size(), false) {}

  Error take(const KnownMemory &M, const std::string &Name);
  Error closure();

private:
  Error scan(const KnownMemory &M);
  const std::vector<KnownMemory> &Known;
  PendingCall &P;
  uint64_t MaxBytes;
  std::vector<bool> Taken;
  uint64_t Total = 0;
};

Error Collector::take(const KnownMemory &M, const std::string &Name) {
  size_t I = static_cast<size_t>(&M - Known.data());
  if (Taken[I] || M.Size == 0)
    return Error::success();
  Taken[I] = true;
  Total += M.Size;
  if (Total > MaxBytes)
    return makeError(
        "the memory a call of '", P.Kernel->name,
        "' reaches is more than the snapshot cap: ", P.Regions.size() + 1,
        " regions of ", formatBytes(Total), " (", Total, " bytes) so far, cap ",
        formatBytes(MaxBytes), " (", MaxBytes,
        " bytes; raise it with --max-bytes); the capture was "
        "refused");
  P.Regions.push_back({M, M.Kind == RegionKind::Global ? M.Name : Name});
  return Error::success();
}

Error Collector::scan(const KnownMemory &M) {
  if (Known.empty())
    return Error::success();
  uint64_t Lo = Known.front().Base, Hi = Known.back().Base + Known.back().Size;
  uint64_t First = (M.Base + 7) & ~7ull;
  for (uint64_t A = First; A + 8 <= M.Base + M.Size; A += 8) {
    uint64_t V;
    std::memcpy(&V, reinterpret_cast<const void *>(A), 8);
    if (V < Lo || V >= Hi)
      continue;
    if (const KnownMemory *To = containing(Known, V))
      R3_TRY(take(*To, ""));
  }
  return Error::success();
}

Error Collector::closure() {
  for (size_t I = 0; I < P.Regions.size(); ++I) {
    KnownMemory M = P.Regions[I].Where; // Regions grows while it is scanned
    R3_TRY(scan(M));
  }
  return Error::success();
}

std::string paramName(const r3_host_kernel &K, uint32_t I) {
  const char *N = K.params[I].name;
  return N && *N ? N : "arg" + std::to_string(I);
}

Error takeArguments(Collector &C, const PendingCall &P,
                    const std::vector<KnownMemory> &Known) {
  const r3_host_kernel &K = *P.Kernel;
  for (uint32_t I = 0; I < K.num_params; ++I) {
    if (K.params[I].kind != R3_HOST_PARAM_POINTER || P.Args[I] == 0)
      continue;
    const KnownMemory *M = argumentRegion(Known, P.Args[I]);
    if (!M)
      return makeError("argument ", I + 1, " ('", paramName(K, I), "') of '",
                       K.name, "' points to ", hex(P.Args[I]),
                       ", which is not memory r3 tracks (a stack array, or "
                       "memory allocated before recording started); the "
                       "capture was refused");
    R3_TRY(C.take(*M, paramName(K, I)));
  }
  return Error::success();
}

Error takeGlobals(Collector &C, const PendingCall &P,
                  const std::vector<KnownMemory> &Known) {
  const r3_host_kernel &K = *P.Kernel;
  for (uint32_t I = 0; I < K.num_globals; ++I) {
    const KnownMemory *M =
        containing(Known, reinterpret_cast<uint64_t>(K.globals[I].address));
    if (M)
      R3_TRY(C.take(*M, ""));
  }
  return Error::success();
}

Error copyPre(SnapshotRegion &R) {
  long P = ::syscall(SYS_mmap, nullptr, R.Where.Size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (P == -1)
    return errnoError("cannot map " + formatBytes(R.Where.Size) +
                      " to copy a region before the recorded call");
  R.Pre = reinterpret_cast<uint8_t *>(P);
  std::memcpy(R.Pre, reinterpret_cast<const void *>(R.Where.Base),
              R.Where.Size);
  return Error::success();
}

const uint8_t *live(const SnapshotRegion &R) {
  return reinterpret_cast<const uint8_t *>(R.Where.Base);
}

/// A heap block or mapping the call released cannot be read again.
Error checkStillThere(const PendingCall &P, const SnapshotRegion &R) {
  if (R.Where.Kind == RegionKind::Global ||
      stillTracked(R.Where.Base, R.Where.Size))
    return Error::success();
  return makeError("the recorded call of '", P.Kernel->name,
                   "' freed or "
                   "unmapped the region at ",
                   hex(R.Where.Base), " (", formatBytes(R.Where.Size),
                   ") that it was given; the "
                   "capture was refused");
}

Error sendRegion(uint64_t LaunchId, Phase Side, size_t Index,
                 const SnapshotRegion &R, const uint8_t *Bytes) {
  RegionMsg M;
  M.LaunchId = LaunchId;
  M.Side = Side;
  M.Index = Index;
  M.Info.Base = R.Where.Base;
  M.Info.Kind = R.Where.Kind;
  M.Info.Name = R.Name;
  return sendFrame(Type::Region, encode(M), std::span(Bytes, R.Where.Size));
}

LaunchMsg launchMessage(const PendingCall &P, uint64_t LaunchId,
                        const uint64_t *Ret) {
  LaunchMsg M;
  M.Id = LaunchId;
  M.KernelId = P.KernelId;
  M.Info.Ordinal = P.Ordinal;
  const auto *A = reinterpret_cast<const uint8_t *>(P.Args.data());
  M.Info.Params.assign(A, A + P.Args.size() * 8);
  if (P.Kernel->returns != 0) {
    uint64_t Slot = Ret ? *Ret : 0;
    const auto *S = reinterpret_cast<const uint8_t *>(&Slot);
    M.Info.Params.insert(M.Info.Params.end(), S, S + 8);
  }
  return M;
}
} // namespace

PendingCall::~PendingCall() {
  for (SnapshotRegion &R : Regions)
    if (R.Pre)
      ::syscall(SYS_munmap, R.Pre, R.Where.Size);
}

Error snapshotCall(PendingCall &P, const std::vector<KnownMemory> &Known,
                   uint64_t MaxBytes) {
  Collector C(Known, P, MaxBytes);
  R3_TRY(takeArguments(C, P, Known));
  R3_TRY(takeGlobals(C, P, Known));
  R3_TRY(C.closure());
  for (SnapshotRegion &R : P.Regions)
    R3_TRY(copyPre(R));
  return Error::success();
}

Error sendCall(const PendingCall &P, uint64_t LaunchId, const uint64_t *Ret) {
  for (const SnapshotRegion &R : P.Regions)
    R3_TRY(checkStillThere(P, R));
  R3_TRY(sendFrame(Type::Launch, encode(launchMessage(P, LaunchId, Ret))));
  for (size_t I = 0; I < P.Regions.size(); ++I)
    R3_TRY(sendRegion(LaunchId, Phase::Pre, I, P.Regions[I], P.Regions[I].Pre));
  for (size_t I = 0; I < P.Regions.size(); ++I) {
    const SnapshotRegion &R = P.Regions[I];
    if (std::memcmp(R.Pre, live(R), R.Where.Size) != 0)
      R3_TRY(sendRegion(LaunchId, Phase::Post, I, R, live(R)));
  }
  return Error::success();
}

} // namespace r3::host
