// Record stream → capture file.
#include "record/CaptureSink.h"

#include "record/Messages.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

namespace r3 {

namespace {
using namespace wire;

std::string noRuntimeMessage() {
  return std::string(NothingSentMessage) +
         ": it never started r3's recording library (host backend: is it "
         "built with $(r3 host-flags ...) and linked with $(r3 host-flags "
         "--libs)?); no capture written";
}

class Sink {
public:
  Sink(int Fd, const std::string &Path, const CaptureHeader &Base,
       CaptureCompression C, const BulkRing *Ring)
      : Fd(Fd), Path(Path), Header(Base), Compression(C), Ring(Ring) {}
  Expected<RecordStats> run();

private:
  Error handle(const FrameHeader &H, std::span<const uint8_t> Meta, bool &Done);
  Error onHello(std::span<const uint8_t> Meta);
  Error onModule(std::span<const uint8_t> Meta, uint64_t Bulk);
  Error onKernel(std::span<const uint8_t> Meta);
  Error onLaunch(std::span<const uint8_t> Meta);
  Error onRegion(std::span<const uint8_t> Meta, uint64_t Bulk);
  Error storeRegion(uint32_t Launch, const RegionMsg &M, const ByteSource &Src);
  Error onDuration(std::span<const uint8_t> Meta);
  Expected<uint32_t> lookup(const std::map<uint64_t, uint32_t> &Ids,
                            uint64_t Id, const char *What);
  ByteSource fromStream() const;
  Expected<ByteSource> fromRing(uint64_t Size);

  int Fd;
  std::string Path;
  CaptureHeader Header;
  CaptureCompression Compression;
  const BulkRing *Ring;
  std::optional<RingReader> Reader; ///< of Ring, made on first use
  std::unique_ptr<CaptureWriter> Writer;
  std::map<uint64_t, uint32_t> Modules, Kernels, Launches;
  std::map<uint32_t, uint32_t> RegionsPerLaunch;
  std::map<uint32_t, std::string> KernelNames;
  RecordStats Stats;
};

ByteSource Sink::fromStream() const {
  int F = Fd;
  return [F](uint64_t, std::span<uint8_t> Out) { return readExactly(F, Out); };
}

Expected<ByteSource> Sink::fromRing(uint64_t Size) {
  if (!Ring)
    return Error::make("record stream: a region sent through a record ring "
                       "that this recording does not have");
  if (!Reader)
    Reader.emplace(*Ring, Fd);
  Reader->beginRegion(Size);
  RingReader *R = &*Reader;
  return ByteSource(
      [R](uint64_t, std::span<uint8_t> Out) { return R->read(Out); });
}

Expected<uint32_t> Sink::lookup(const std::map<uint64_t, uint32_t> &Ids,
                                uint64_t Id, const char *What) {
  auto It = Ids.find(Id);
  if (It == Ids.end())
    return makeError("record stream: unknown ", What, " id ", Id);
  return It->second;
}

Error Sink::onHello(std::span<const uint8_t> Meta) {
  HelloMsg M;
  R3_TRY(decode(Meta, M));
  if (M.Version != ProtocolVersion)
    return makeError(
        "record stream: protocol version ", M.Version, ", expected ",
        ProtocolVersion,
        " (the injected library and r3 come from different builds)");
  if (Writer)
    return Error::make("record stream: a second hello");
  Header.Source = M.Source;
  Header.Device = M.Device;
  auto W = CaptureWriter::create(Path, Header, Compression);
  if (!W)
    return W.takeError();
  Writer = std::move(*W);
  return Error::success();
}

Error Sink::onModule(std::span<const uint8_t> Meta, uint64_t Bulk) {
  ModuleMsg M;
  R3_TRY(decode(Meta, M));
  constexpr uint64_t MaxImage = 2ull << 30; // module images are held in memory
  if (Bulk > MaxImage)
    return makeError("record stream: a module image of ", Bulk,
                     " bytes (more than 2 GiB: corrupt stream)");
  std::vector<uint8_t> Image;
  R3_TRY(readGrowing(Fd, Bulk, Image));
  auto Index = Writer->addModule(M.Kind, Image);
  if (!Index)
    return Index.takeError();
  Modules[M.Id] = *Index;
  ++Stats.Modules;
  return Error::success();
}

Error Sink::onKernel(std::span<const uint8_t> Meta) {
  KernelMsg M;
  R3_TRY(decode(Meta, M));
  R3_TRY(moveInto(lookup(Modules, M.ModuleId, "module"), M.Info.Module));
  auto Index = Writer->addKernel(M.Info);
  if (!Index)
    return Index.takeError();
  Kernels[M.Id] = *Index;
  KernelNames[*Index] = M.Info.Name;
  ++Stats.Kernels;
  return Error::success();
}

Error Sink::onLaunch(std::span<const uint8_t> Meta) {
  LaunchMsg M;
  R3_TRY(decode(Meta, M));
  R3_TRY(moveInto(lookup(Kernels, M.KernelId, "kernel"), M.Info.Kernel));
  auto Index = Writer->beginLaunch(M.Info);
  if (!Index)
    return Index.takeError();
  Launches[M.Id] = *Index;
  ++Stats.Launches;
  const std::string &Name = KernelNames[M.Info.Kernel];
  auto &Seen = Stats.LaunchedKernels;
  if (std::find(Seen.begin(), Seen.end(), Name) == Seen.end())
    Seen.push_back(Name);
  return Error::success();
}

Error Sink::onRegion(std::span<const uint8_t> Meta, uint64_t Bulk) {
  RegionMsg M;
  R3_TRY(decode(Meta, M));
  uint32_t L = 0;
  R3_TRY(moveInto(lookup(Launches, M.LaunchId, "launch"), L));
  ByteSource Src = fromStream();
  if (M.ViaRing) {
    if (Bulk != 0)
      return Error::make("record stream: a ring region with bulk bytes");
    R3_TRY(moveInto(fromRing(M.Info.Size), Src));
  } else {
    M.Info.Size = Bulk;
  }
  if (Error E = storeRegion(L, M, Src)) {
    // A recording that failed midway says why, as it does between frames.
    if (M.ViaRing && !Reader->failure().empty())
      return Error::make(Reader->failure());
    return E;
  }
  // The writer reads as many bytes as the capture says the region has; a
  // ring region that announced another size left chunks unread.
  if (M.ViaRing && !Reader->regionDone())
    return makeError("record stream: region ", M.Index, " of launch ",
                     M.LaunchId, " sent ", M.Info.Size,
                     " bytes through the ring, not its size");
  Stats.RegionBytes += M.Info.Size;
  return Error::success();
}

Error Sink::storeRegion(uint32_t L, const RegionMsg &M, const ByteSource &Src) {
  if (M.Side == Phase::Post)
    return Writer->addChangedRegion(L, static_cast<uint32_t>(M.Index), Src);
  if (M.Index != RegionsPerLaunch[L])
    return makeError("record stream: region ", M.Index, " of launch ",
                     M.LaunchId, " out of order (expected ",
                     RegionsPerLaunch[L], ")");
  auto R = Writer->addRegion(L, M.Info, Src);
  if (!R)
    return R.takeError();
  ++RegionsPerLaunch[L];
  ++Stats.Regions;
  return Error::success();
}

Error Sink::onDuration(std::span<const uint8_t> Meta) {
  DurationMsg M;
  R3_TRY(decode(Meta, M));
  uint32_t K = 0;
  R3_TRY(moveInto(lookup(Kernels, M.KernelId, "kernel"), K));
  Writer->addAppDuration(K, M.Nanoseconds);
  if (M.LaunchId != NoLaunch) {
    uint32_t L = 0;
    R3_TRY(moveInto(lookup(Launches, M.LaunchId, "launch"), L));
    Writer->setLaunchDuration(L, M.Nanoseconds);
  }
  return Error::success();
}

Error Sink::handle(const FrameHeader &H, std::span<const uint8_t> Meta,
                   bool &Done) {
  if (!Writer && H.Kind != Type::Hello && H.Kind != Type::Failure)
    return Error::make("record stream: data before the hello frame");
  bool TakesBulk = H.Kind == Type::Module || H.Kind == Type::Region;
  if (!TakesBulk && H.BulkLength != 0)
    return makeError("record stream: frame type ", uint32_t(H.Kind),
                     " carries unexpected bulk bytes");
  switch (H.Kind) {
  case Type::Hello:
    return onHello(Meta);
  case Type::Module:
    return onModule(Meta, H.BulkLength);
  case Type::Kernel:
    return onKernel(Meta);
  case Type::Launch:
    return onLaunch(Meta);
  case Type::Region:
    return onRegion(Meta, H.BulkLength);
  case Type::Duration:
    return onDuration(Meta);
  case Type::Failure: {
    std::string Message;
    R3_TRY(decodeFailure(Meta, Message));
    return Error::make(Message);
  }
  case Type::Warning: {
    Stats.Warnings.emplace_back();
    return decodeWarning(Meta, Stats.Warnings.back());
  }
  case Type::Done:
    Done = true;
    return Error::success();
  case Type::KernelStats:
    return Error::make(
        "record stream: a list-mode statistics frame in a recording");
  case Type::RingChunk:
    return Error::make("record stream: a ring chunk outside a region");
  }
  return makeError("record stream: unknown frame type ", uint32_t(H.Kind));
}

Expected<RecordStats> Sink::run() {
  constexpr uint32_t MaxMeta = 64u << 20;
  for (bool Done = false; !Done;) {
    FrameHeader H;
    bool AtEnd = false;
    R3_TRY(readHeader(Fd, H, AtEnd));
    if (AtEnd && !Writer)
      return Error::make(noRuntimeMessage());
    if (AtEnd)
      return Error::make("the recorded process ended before recording finished "
                         "(no capture written)");
    if (H.MetaLength > MaxMeta)
      return makeError("record stream: a frame with ", H.MetaLength,
                       " bytes of fields (corrupt stream)");
    std::vector<uint8_t> Meta;
    R3_TRY(readGrowing(Fd, H.MetaLength, Meta));
    R3_TRY(handle(H, Meta, Done));
  }
  R3_TRY(Writer->finish());
  return Stats;
}
Error onListFrame(int Fd, const FrameHeader &H,
                  std::vector<KernelStatsMsg> &Out, bool &Done) {
  if (H.BulkLength != 0 || H.MetaLength > (1u << 20))
    return Error::make("record stream: a malformed list-mode frame");
  std::vector<uint8_t> Meta(H.MetaLength);
  R3_TRY(readExactly(Fd, Meta));
  switch (H.Kind) {
  case Type::Hello: {
    HelloMsg M;
    return decode(Meta, M);
  }
  case Type::KernelStats:
    Out.emplace_back();
    return decode(Meta, Out.back());
  case Type::Failure: {
    std::string Message;
    R3_TRY(decodeFailure(Meta, Message));
    return Error::make(Message);
  }
  case Type::Warning: {
    std::string Ignored; // list mode records nothing to warn about
    return decodeWarning(Meta, Ignored);
  }
  case Type::Done:
    Done = true;
    return Error::success();
  default:
    return makeError("record stream: frame type ", uint32_t(H.Kind),
                     " in list mode");
  }
}
} // namespace

Expected<std::vector<KernelStatsMsg>> receiveKernelList(int Fd) {
  std::vector<KernelStatsMsg> Out;
  for (bool Done = false, Any = false; !Done; Any = true) {
    FrameHeader H;
    bool AtEnd = false;
    R3_TRY(readHeader(Fd, H, AtEnd));
    if (AtEnd)
      return Error::make(Any ? "the recorded process ended before its kernel "
                               "list was complete"
                             : noRuntimeMessage());
    R3_TRY(onListFrame(Fd, H, Out, Done));
  }
  return Out;
}

Expected<RecordStats> receiveCapture(int Fd, const std::string &Path,
                                     const CaptureHeader &Base,
                                     CaptureCompression Compression,
                                     const BulkRing *Ring) {
  Sink S(Fd, Path, Base, Compression, Ring);
  return S.run();
}

} // namespace r3
