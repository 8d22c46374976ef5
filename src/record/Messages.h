// The messages of the record stream (Protocol.h), encoded from and decoded into
// the capture model's plain structs. Ids are the sender's: a CUPTI module id, a
// CUfunction address, a running launch counter; the receiver maps them to
// capture indices.
#pragma once

#include "capture/Capture.h"
#include "record/Protocol.h"

namespace r3::wire {

struct HelloMsg {
  uint32_t Version = ProtocolVersion;
  Backend Source = Backend::Cuda;
  uint64_t Pid = 0;
  DeviceInfo Device;
};
struct ModuleMsg {
  uint64_t Id = 0;
  ModuleKind Kind = ModuleKind::Cubin;
};
struct KernelMsg {
  uint64_t Id = 0, ModuleId = 0;
  KernelInfo Info; ///< Info.Module is ignored: ModuleId says which module
};
struct LaunchMsg {
  uint64_t Id = 0, KernelId = 0;
  LaunchInfo Info; ///< Info.Kernel and Info.Regions are ignored
};
struct RegionMsg {
  uint64_t LaunchId = 0;
  Phase Side = Phase::Pre;
  uint64_t Index = 0; ///< for Post: the index of the region's Pre message
  RegionInfo Info;    ///< Info.Size is the region's size
  /// The bytes follow as RingChunk frames through the bulk ring (Ring.h);
  /// otherwise they are the frame's bulk bytes, Info.Size of them.
  bool ViaRing = false;
};
/// The next bytes of the region whose Region frame came last, in slot Slot of
/// the bulk ring; the receiver gives the slot back once it has used them.
struct RingChunkMsg {
  uint32_t Slot = 0;
  uint64_t Bytes = 0;
};
struct DurationMsg {
  uint64_t KernelId = 0, LaunchId = NoLaunch, Nanoseconds = 0;
};

/// List mode (r3 record --list): what one instrumented kernel did.
struct KernelStatsMsg {
  std::string Name;      ///< mangled
  std::string Demangled; ///< empty when the name is not mangled
  uint64_t Launches = 0, TotalNs = 0;
  Dim3 Grid = {1, 1, 1}, Block = {1, 1, 1}; ///< of the kernel's first launch
  uint64_t TimedLaunches = 0;               ///< the launches TotalNs covers
  /// Why r3 cannot record (so tune) this kernel's launches, empty when it
  /// can: "launched from a CUDA graph", "cooperative launches".
  std::string Untunable;
};

MetaWriter encode(const HelloMsg &M);
MetaWriter encode(const KernelStatsMsg &M);
MetaWriter encode(const ModuleMsg &M);
MetaWriter encode(const KernelMsg &M);
MetaWriter encode(const LaunchMsg &M);
MetaWriter encode(const RegionMsg &M);
MetaWriter encode(const DurationMsg &M);
MetaWriter encode(const RingChunkMsg &M);
MetaWriter encodeFailure(const std::string &Message);
MetaWriter encodeWarning(const std::string &Message);

Error decode(std::span<const uint8_t> Meta, HelloMsg &M);
Error decode(std::span<const uint8_t> Meta, ModuleMsg &M);
Error decode(std::span<const uint8_t> Meta, KernelMsg &M);
Error decode(std::span<const uint8_t> Meta, LaunchMsg &M);
Error decode(std::span<const uint8_t> Meta, RegionMsg &M);
Error decode(std::span<const uint8_t> Meta, DurationMsg &M);
Error decode(std::span<const uint8_t> Meta, RingChunkMsg &M);
Error decode(std::span<const uint8_t> Meta, KernelStatsMsg &M);
Error decodeFailure(std::span<const uint8_t> Meta, std::string &Message);
Error decodeWarning(std::span<const uint8_t> Meta, std::string &Message);

} // namespace r3::wire
