// Internal interfaces between the parts of the host runtime (libr3-host-rt):
// allocation tracking (RuntimeInterpose.cpp), the record hooks and the stream
// (Runtime.cpp) and the snapshot of one recorded call (RuntimeCapture.cpp).
// Nothing here is visible outside the library.
#pragma once

#include "capture/Capture.h"
#include "record/Protocol.h"
#include "record/host/AllocationTable.h"
#include "record/host/HostAbi.h"
#include "support/Error.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

/// Nonzero while the runtime itself runs on this thread: its own allocations
/// are then not tracked, and hooks do not recurse. Initial-exec TLS, so that
/// reading it never allocates (it is read inside malloc).
extern __thread int R3RuntimeBusy __attribute__((tls_model("initial-exec")));

namespace r3::host {

/// Marks the runtime busy on this thread for a scope.
class BusyScope {
public:
  BusyScope() { ++R3RuntimeBusy; }
  ~BusyScope() { --R3RuntimeBusy; }
  BusyScope(const BusyScope &) = delete;
  BusyScope &operator=(const BusyScope &) = delete;
};

/// Whether allocations are tracked: true only while the process records under
/// `r3 record`. Read on every allocation, so the untracked path is one branch.
extern bool TrackingOn;

/// Whether the process runs under `r3 run --use` (RuntimeUse.cpp): set once
/// at start-up, never while recording.
extern bool UseOn;

/// The tracked allocations, sorted by base (takes the table's lock).
std::vector<Allocation> trackedAllocations();
/// Whether an allocation of exactly [Base, Base + Size) is still tracked.
bool stillTracked(uint64_t Base, uint64_t Size);

/// Memory r3 may snapshot: a tracked allocation or a registered global.
struct KnownMemory {
  uint64_t Base = 0, Size = 0;
  RegionKind Kind = RegionKind::Heap;
  std::string Name; ///< a global's name in the bitcode, else empty
};

/// Every piece of memory a call of K may reach, sorted by base: the tracked
/// allocations, K's globals (their names are the bitcode's), then the globals
/// the registered units define.
std::vector<KnownMemory> knownMemory(const r3_host_kernel &K);

/// One region of a recorded call, with its bytes before the call.
struct SnapshotRegion {
  KnownMemory Where;
  std::string Name;       ///< what the capture stores as the region's name
  uint8_t *Pre = nullptr; ///< a private anonymous mapping of Where.Size bytes
};

/// The state of one recorded call between __r3_host_enter and _exit.
struct PendingCall {
  r3_host_kernel *Kernel = nullptr;
  uint64_t KernelId = 0, Ordinal = 0;
  std::vector<uint64_t> Args;
  std::vector<SnapshotRegion> Regions;
  uint64_t StartNs = 0;
  ~PendingCall();
};

/// Snapshots the regions a call of K with Args reaches, up to MaxBytes in all:
/// the regions its pointer arguments point into, K's globals, and what
/// pointers stored inside them reach, transitively. Known lists the memory r3
/// knows, sorted by base. An error refuses the capture.
Error snapshotCall(PendingCall &P, const std::vector<KnownMemory> &Known,
                   uint64_t MaxBytes);

/// The Launch, Region (pre, and post for every changed region) frames of a
/// finished recorded call; Ret is the return value's slot or null.
Error sendCall(const PendingCall &P, uint64_t LaunchId, const uint64_t *Ret);

/// Sends one frame on the record stream (the caller holds the send lock).
Error sendFrame(wire::Type T, const wire::MetaWriter &Meta,
                std::span<const uint8_t> Bulk = {});

// --- r3 run --use (RuntimeUse.cpp) ---

/// Reads the plan when r3 run gave one and loads the use-library; sets UseOn.
/// A plan that cannot be used is reported, and the application runs
/// untouched.
void startUse();
/// Replaces the unit's planned kernels (their tuned_entry).
void useUnit(const r3_host_unit *Unit);
/// A call of K: counted, and checked against the original code for the
/// plan's first launches (a token is returned for useExit then).
void *useEnter(r3_host_kernel *K, const uint64_t *Args);
void useExit(r3_host_kernel *K, void *Token, const uint64_t *Ret);

/// Nanoseconds of CLOCK_MONOTONIC.
uint64_t monotonicNs();

} // namespace r3::host
