// Encoding of the record stream's messages. Each decode mirrors its encode
// field by field; MetaReader::finish catches a sender and receiver that
// disagree.
#include "record/Messages.h"

namespace r3::wire {

MetaWriter encode(const HelloMsg &M) {
  MetaWriter W;
  W.u32(M.Version).u32(static_cast<uint32_t>(M.Source)).u64(M.Pid);
  W.str(M.Device.Name).i64(M.Device.ComputeMajor).i64(M.Device.ComputeMinor);
  W.i64(M.Device.DriverVersion).u64(M.Device.MemoryBytes);
  W.i64(M.Device.Ordinal).str(M.Device.PciBusId);
  return W;
}

Error decode(std::span<const uint8_t> Meta, HelloMsg &M) {
  MetaReader R(Meta);
  M.Version = R.u32();
  uint32_t Source = R.u32();
  M.Pid = R.u64();
  M.Device.Name = R.str();
  M.Device.ComputeMajor = static_cast<int>(R.i64());
  M.Device.ComputeMinor = static_cast<int>(R.i64());
  M.Device.DriverVersion = static_cast<int>(R.i64());
  M.Device.MemoryBytes = R.u64();
  M.Device.Ordinal = static_cast<int>(R.i64());
  M.Device.PciBusId = R.str();
  if (Source > static_cast<uint32_t>(Backend::Host))
    return makeError("hello message: unknown backend ", Source);
  M.Source = static_cast<Backend>(Source);
  return R.finish("hello");
}

MetaWriter encode(const ModuleMsg &M) {
  MetaWriter W;
  W.u64(M.Id).u32(static_cast<uint32_t>(M.Kind));
  return W;
}

Error decode(std::span<const uint8_t> Meta, ModuleMsg &M) {
  MetaReader R(Meta);
  M.Id = R.u64();
  uint32_t Kind = R.u32();
  if (Kind > static_cast<uint32_t>(ModuleKind::Bitcode))
    return makeError("module message: unknown module kind ", Kind);
  M.Kind = static_cast<ModuleKind>(Kind);
  return R.finish("module");
}

MetaWriter encode(const KernelMsg &M) {
  MetaWriter W;
  const KernelInfo &K = M.Info;
  W.u64(M.Id).u64(M.ModuleId).str(K.Name).str(K.Demangled);
  W.u64(K.Params.size());
  for (const ParamInfo &P : K.Params)
    W.u64(P.Offset).u64(P.Size);
  W.u64(K.Globals.size());
  for (const GlobalInfo &G : K.Globals)
    W.str(G.Name).u64(G.Address).u64(G.Size);
  const FunctionAttributes &A = K.Attributes;
  W.i64(A.Registers)
      .i64(A.StaticSharedBytes)
      .i64(A.MaxThreadsPerBlock)
      .i64(A.LocalBytes);
  return W;
}

Error decode(std::span<const uint8_t> Meta, KernelMsg &M) {
  MetaReader R(Meta);
  KernelInfo &K = M.Info;
  M.Id = R.u64();
  M.ModuleId = R.u64();
  K.Name = R.str();
  K.Demangled = R.str();
  for (uint64_t I = 0, N = R.u64(); I < N && I < Meta.size(); ++I)
    K.Params.push_back({R.u64(), R.u64()});
  for (uint64_t I = 0, N = R.u64(); I < N && I < Meta.size(); ++I) {
    GlobalInfo G;
    G.Name = R.str();
    G.Address = R.u64();
    G.Size = R.u64();
    K.Globals.push_back(std::move(G));
  }
  FunctionAttributes &A = K.Attributes;
  A.Registers = R.i64();
  A.StaticSharedBytes = R.i64();
  A.MaxThreadsPerBlock = R.i64();
  A.LocalBytes = R.i64();
  return R.finish("kernel");
}

MetaWriter encode(const LaunchMsg &M) {
  MetaWriter W;
  const LaunchInfo &L = M.Info;
  W.u64(M.Id).u64(M.KernelId).u64(L.Ordinal);
  for (uint32_t D : L.Grid)
    W.u32(D);
  for (uint32_t D : L.Block)
    W.u32(D);
  W.u32(L.DynamicSharedBytes).bytes(L.Params);
  return W;
}

Error decode(std::span<const uint8_t> Meta, LaunchMsg &M) {
  MetaReader R(Meta);
  LaunchInfo &L = M.Info;
  M.Id = R.u64();
  M.KernelId = R.u64();
  L.Ordinal = R.u64();
  for (uint32_t &D : L.Grid)
    D = R.u32();
  for (uint32_t &D : L.Block)
    D = R.u32();
  L.DynamicSharedBytes = R.u32();
  L.Params = R.bytes();
  return R.finish("launch");
}

MetaWriter encode(const RegionMsg &M) {
  MetaWriter W;
  W.u64(M.LaunchId).u32(static_cast<uint32_t>(M.Side)).u64(M.Index);
  W.u64(M.Info.Base).u32(static_cast<uint32_t>(M.Info.Kind)).str(M.Info.Name);
  W.u64(M.Info.Size).u32(M.ViaRing ? 1 : 0);
  return W;
}

Error decode(std::span<const uint8_t> Meta, RegionMsg &M) {
  MetaReader R(Meta);
  M.LaunchId = R.u64();
  uint32_t Side = R.u32();
  M.Index = R.u64();
  M.Info.Base = R.u64();
  uint32_t Kind = R.u32();
  M.Info.Name = R.str();
  M.Info.Size = R.u64();
  uint32_t ViaRing = R.u32();
  if (ViaRing > 1)
    return makeError("region message: bad transport ", ViaRing);
  M.ViaRing = ViaRing == 1;
  if (Side > 1)
    return makeError("region message: unknown phase ", Side);
  if (Kind > static_cast<uint32_t>(RegionKind::Mmap))
    return makeError("region message: unknown region kind ", Kind);
  M.Side = static_cast<Phase>(Side);
  M.Info.Kind = static_cast<RegionKind>(Kind);
  return R.finish("region");
}

MetaWriter encode(const RingChunkMsg &M) {
  MetaWriter W;
  W.u32(M.Slot).u64(M.Bytes);
  return W;
}

Error decode(std::span<const uint8_t> Meta, RingChunkMsg &M) {
  MetaReader R(Meta);
  M.Slot = R.u32();
  M.Bytes = R.u64();
  return R.finish("ring chunk");
}

MetaWriter encode(const DurationMsg &M) {
  MetaWriter W;
  W.u64(M.KernelId).u64(M.LaunchId).u64(M.Nanoseconds);
  return W;
}

Error decode(std::span<const uint8_t> Meta, DurationMsg &M) {
  MetaReader R(Meta);
  M.KernelId = R.u64();
  M.LaunchId = R.u64();
  M.Nanoseconds = R.u64();
  return R.finish("duration");
}

MetaWriter encode(const KernelStatsMsg &M) {
  MetaWriter W;
  W.str(M.Name).str(M.Demangled).u64(M.Launches).u64(M.TotalNs);
  for (uint32_t D : M.Grid)
    W.u32(D);
  for (uint32_t D : M.Block)
    W.u32(D);
  W.u64(M.TimedLaunches).str(M.Untunable);
  return W;
}

Error decode(std::span<const uint8_t> Meta, KernelStatsMsg &M) {
  MetaReader R(Meta);
  M.Name = R.str();
  M.Demangled = R.str();
  M.Launches = R.u64();
  M.TotalNs = R.u64();
  for (uint32_t &D : M.Grid)
    D = R.u32();
  for (uint32_t &D : M.Block)
    D = R.u32();
  M.TimedLaunches = R.u64();
  M.Untunable = R.str();
  return R.finish("kernel statistics");
}

MetaWriter encodeFailure(const std::string &Message) {
  MetaWriter W;
  W.str(Message);
  return W;
}

Error decodeFailure(std::span<const uint8_t> Meta, std::string &Message) {
  MetaReader R(Meta);
  Message = R.str();
  return R.finish("failure");
}

MetaWriter encodeWarning(const std::string &Message) {
  MetaWriter W;
  W.str(Message);
  return W;
}

Error decodeWarning(std::span<const uint8_t> Meta, std::string &Message) {
  MetaReader R(Meta);
  Message = R.str();
  return R.finish("warning");
}

} // namespace r3::wire
