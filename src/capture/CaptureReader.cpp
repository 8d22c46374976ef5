// Capture reader: structural validation at open, chunked reads afterwards.
#include "capture/CaptureReader.h"

#include "capture/Format.h"
#include "capture/Hdf5.h"
#include "capture/Superblock.h"
#include "support/FileUtil.h"

#include <algorithm>

namespace r3 {

struct CaptureReader::Impl {
  std::string Path;
  h5::Handle File;
  uint32_t Version = 0;
  CaptureHeader Header;
  std::vector<ModuleInfo> Modules;
  std::vector<KernelInfo> Kernels;
  std::vector<LaunchInfo> Launches;

  Error readRoot();
  Error readHeader();
  Expected<uint64_t> containerCount(const char *Group);
  Error readModule(uint32_t M);
  Error readKernel(uint32_t K);
  Error readLaunch(uint32_t L);
  Error readRegionInfo(uint32_t L, uint32_t R, RegionInfo &Out);
  Expected<uint64_t> checkedByteDataset(const std::string &Path,
                                        uint64_t Expected);
  Error stream(const std::string &Path, uint64_t Size,
               const ByteSink &Sink) const;
};

CaptureReader::CaptureReader(std::unique_ptr<Impl> I) : P(std::move(I)) {}
CaptureReader::~CaptureReader() = default;

const std::string &CaptureReader::path() const { return P->Path; }
uint32_t CaptureReader::formatVersion() const { return P->Version; }
const CaptureHeader &CaptureReader::header() const { return P->Header; }
const std::vector<ModuleInfo> &CaptureReader::modules() const {
  return P->Modules;
}
const std::vector<KernelInfo> &CaptureReader::kernels() const {
  return P->Kernels;
}
const std::vector<LaunchInfo> &CaptureReader::launches() const {
  return P->Launches;
}

Error CaptureReader::Impl::readRoot() {
  hid_t Root = File.get();
  bool HasMagic = false;
  if (Error E = moveInto(h5::hasAttribute(Root, format::MagicAttr), HasMagic))
    return std::move(E).context("/");
  if (!HasMagic)
    return Error::make("not an r3 capture (an HDF5 file without the '" +
                       format::MagicAttr + "' attribute on /)");
  auto Magic = h5::readStringAttr(Root, format::MagicAttr);
  if (!Magic || *Magic != format::Magic)
    return Error::make("not an r3 capture (attribute '" + format::MagicAttr +
                       "' on / is not '" + format::Magic + "')");
  auto V = h5::readUnsignedAttr(Root, format::VersionAttr);
  if (!V)
    return V.takeError().context("/");
  if (*V == 0)
    return Error::make(
        "capture format version 0 is not valid (versions start at 1)");
  if (*V > CaptureFormatVersion)
    return makeError("capture format version ", *V,
                     " is newer than this r3 reads (", CaptureFormatVersion,
                     "); upgrade r3 to read it");
  Version = static_cast<uint32_t>(*V);
  bool Complete = false;
  R3_TRY(moveInto(h5::hasAttribute(Root, format::CompleteAttr), Complete));
  if (!Complete)
    return Error::make("incomplete capture: its writer did not finish (was it "
                       "killed?); record it again");
  return Error::success();
}

Error CaptureReader::Impl::readHeader() {
  hid_t Root = File.get();
  std::string Backend;
  R3_TRY(moveInto(h5::readStringAttr(Root, "backend"), Backend));
  auto B = parseBackend(Backend);
  if (!B)
    return Error::make("unknown backend '" + Backend +
                       "' (expected cuda or host)");
  Header.Source = *B;
  R3_TRY(moveInto(h5::readStringAttr(Root, "producer"), Header.Producer));
  auto Dev = h5::openGroup(Root, "/device");
  if (!Dev)
    return Dev.takeError();
  DeviceInfo &D = Header.Device;
  hid_t G = Dev->get();
  auto InDevice = [](Error E) { return std::move(E).context("/device"); };
  if (Error E = moveInto(h5::readStringAttr(G, "name"), D.Name))
    return InDevice(std::move(E));
  if (Error E =
          moveInto(h5::readSignedAttr(G, "compute_major"), D.ComputeMajor))
    return InDevice(std::move(E));
  if (Error E =
          moveInto(h5::readSignedAttr(G, "compute_minor"), D.ComputeMinor))
    return InDevice(std::move(E));
  if (Error E =
          moveInto(h5::readSignedAttr(G, "driver_version"), D.DriverVersion))
    return InDevice(std::move(E));
  if (Error E =
          moveInto(h5::readUnsignedAttr(G, "memory_bytes"), D.MemoryBytes))
    return InDevice(std::move(E));
  // Optional: captures written before r3 recorded which device it was.
  bool HasOrdinal = false, HasBusId = false;
  if (Error E = moveInto(h5::hasAttribute(G, "ordinal"), HasOrdinal))
    return InDevice(std::move(E));
  if (HasOrdinal)
    if (Error E = moveInto(h5::readSignedAttr(G, "ordinal"), D.Ordinal))
      return InDevice(std::move(E));
  if (Error E = moveInto(h5::hasAttribute(G, "pci_bus_id"), HasBusId))
    return InDevice(std::move(E));
  if (HasBusId)
    if (Error E = moveInto(h5::readStringAttr(G, "pci_bus_id"), D.PciBusId))
      return InDevice(std::move(E));
  auto App = h5::openGroup(Root, "/application");
  if (!App)
    return App.takeError();
  auto InApp = [](Error E) { return std::move(E).context("/application"); };
  if (Error E = moveInto(h5::readStringDataset(App->get(), "command_line"),
                         Header.CommandLine))
    return InApp(std::move(E));
  if (Error E = moveInto(h5::readStringDataset(App->get(), "environment"),
                         Header.Environment))
    return InApp(std::move(E));
  return Error::success();
}

Expected<uint64_t> CaptureReader::Impl::containerCount(const char *Group) {
  auto G = h5::openGroup(File.get(), Group);
  if (!G)
    return G.takeError();
  auto N = h5::readUnsignedAttr(G->get(), format::CountAttr);
  if (!N)
    return N.takeError().context(Group);
  return N;
}

Expected<uint64_t>
CaptureReader::Impl::checkedByteDataset(const std::string &Path,
                                        uint64_t Expected) {
  auto D = h5::openDataset(File.get(), Path);
  if (!D)
    return D.takeError();
  auto Size = h5::byteDatasetSize(D->get());
  if (!Size)
    return Size.takeError().context(Path);
  if (*Size == 0)
    return Error::make(Path + ": zero-length region");
  if (Error E = h5::checkStored(D->get(), *Size))
    return std::move(E).context(Path);
  if (Expected && *Size != Expected)
    return makeError(Path, ": holds ", *Size, " bytes, expected ", Expected);
  return Size;
}

Error CaptureReader::Impl::readModule(uint32_t M) {
  std::string Path = format::modulePath(M);
  auto G = h5::openGroup(File.get(), Path);
  if (!G)
    return G.takeError();
  std::string Kind;
  if (Error E = moveInto(h5::readStringAttr(G->get(), "kind"), Kind))
    return std::move(E).context(Path);
  auto K = parseModuleKind(Kind);
  if (!K)
    return Error::make(Path + ": unknown module kind '" + Kind + "'");
  auto Size = checkedByteDataset(Path + "/image", 0);
  if (!Size)
    return Size.takeError();
  Modules.push_back({*K, *Size});
  return Error::success();
}

namespace {
Error readKernelAttrs(hid_t G, KernelInfo &K, uint64_t ModuleCount) {
  R3_TRY(moveInto(h5::readStringAttr(G, "name"), K.Name));
  R3_TRY(moveInto(h5::readStringAttr(G, "demangled"), K.Demangled));
  R3_TRY(moveInto(h5::readUnsignedAttr(G, "module"), K.Module));
  if (K.Module >= ModuleCount)
    return makeError("module ", K.Module, " does not exist (the capture has ",
                     ModuleCount, ")");
  FunctionAttributes &A = K.Attributes;
  R3_TRY(moveInto(h5::readSignedAttr(G, "registers"), A.Registers));
  R3_TRY(moveInto(h5::readSignedAttr(G, "static_shared_bytes"),
                  A.StaticSharedBytes));
  R3_TRY(moveInto(h5::readSignedAttr(G, "max_threads_per_block"),
                  A.MaxThreadsPerBlock));
  return moveInto(h5::readSignedAttr(G, "local_bytes"), A.LocalBytes);
}

Error readKernelTables(hid_t G, KernelInfo &K) {
  std::vector<uint64_t> Offsets, Sizes, Addrs, GSizes;
  std::vector<std::string> Names;
  R3_TRY(moveInto(h5::readU64Dataset(G, "param_offsets"), Offsets));
  R3_TRY(moveInto(h5::readU64Dataset(G, "param_sizes"), Sizes));
  if (Offsets.size() != Sizes.size())
    return Error::make("param_offsets and param_sizes differ in length");
  for (size_t I = 0; I < Offsets.size(); ++I)
    K.Params.push_back({Offsets[I], Sizes[I]});
  R3_TRY(moveInto(h5::readStringDataset(G, "global_names"), Names));
  R3_TRY(moveInto(h5::readU64Dataset(G, "global_addresses"), Addrs));
  R3_TRY(moveInto(h5::readU64Dataset(G, "global_sizes"), GSizes));
  if (Names.size() != Addrs.size() || Names.size() != GSizes.size())
    return Error::make(
        "global_names, global_addresses and global_sizes differ in length");
  for (size_t I = 0; I < Names.size(); ++I)
    K.Globals.push_back({Names[I], Addrs[I], GSizes[I]});
  return moveInto(h5::readU64Dataset(G, "app_durations_ns"), K.AppDurationsNs);
}
} // namespace

Error CaptureReader::Impl::readKernel(uint32_t Index) {
  std::string Path = format::kernelPath(Index);
  auto G = h5::openGroup(File.get(), Path);
  if (!G)
    return G.takeError();
  KernelInfo K;
  if (Error E = readKernelAttrs(G->get(), K, Modules.size()))
    return std::move(E).context(Path);
  if (Error E = readKernelTables(G->get(), K))
    return std::move(E).context(Path);
  Kernels.push_back(std::move(K));
  return Error::success();
}

namespace {
Error readDim3(hid_t G, const std::string &Name, Dim3 &Out) {
  std::vector<uint32_t> V;
  R3_TRY(moveInto(h5::readU32ArrayAttr(G, Name), V));
  if (V.size() != 3)
    return makeError("attribute '", Name, "' has ", V.size(),
                     " values, expected 3");
  std::copy(V.begin(), V.end(), Out.begin());
  return Error::success();
}

Error readLaunchAttrs(hid_t G, LaunchInfo &L, uint64_t KernelCount,
                      uint64_t &Regions) {
  R3_TRY(moveInto(h5::readUnsignedAttr(G, "kernel"), L.Kernel));
  if (L.Kernel >= KernelCount)
    return makeError("kernel ", L.Kernel, " does not exist (the capture has ",
                     KernelCount, ")");
  R3_TRY(moveInto(h5::readUnsignedAttr(G, "ordinal"), L.Ordinal));
  R3_TRY(readDim3(G, "grid", L.Grid));
  R3_TRY(readDim3(G, "block", L.Block));
  R3_TRY(moveInto(h5::readUnsignedAttr(G, "dynamic_shared_bytes"),
                  L.DynamicSharedBytes));
  R3_TRY(moveInto(h5::readUnsignedAttr(G, "region_count"), Regions));
  bool HasDuration = false;
  R3_TRY(moveInto(h5::hasAttribute(G, "duration_ns"), HasDuration));
  if (HasDuration) {
    uint64_t Ns = 0;
    R3_TRY(moveInto(h5::readUnsignedAttr(G, "duration_ns"), Ns));
    L.DurationNs = Ns;
  }
  return moveInto(h5::readSmallBytes(G, "params"), L.Params);
}

Error checkParamLayout(const KernelInfo &K, const LaunchInfo &L) {
  for (size_t I = 0; I < K.Params.size(); ++I)
    if (K.Params[I].Offset + K.Params[I].Size > L.Params.size())
      return makeError("params: parameter ", I, " (offset ", K.Params[I].Offset,
                       ", size ", K.Params[I].Size, ") lies outside the ",
                       L.Params.size(), "-byte parameter buffer");
  return Error::success();
}
} // namespace

Error CaptureReader::Impl::readRegionInfo(uint32_t L, uint32_t R,
                                          RegionInfo &Out) {
  std::string Path = format::regionPath(L, R, Phase::Pre);
  auto Size = checkedByteDataset(Path, 0);
  if (!Size)
    return Size.takeError();
  Out.Size = *Size;
  auto D = h5::openDataset(File.get(), Path);
  if (!D)
    return D.takeError();
  hid_t Id = D->get();
  std::string Kind;
  uint64_t Changed = 0;
  if (Error E = moveInto(h5::readUnsignedAttr(Id, "base"), Out.Base))
    return std::move(E).context(Path);
  if (Error E = moveInto(h5::readStringAttr(Id, "kind"), Kind))
    return std::move(E).context(Path);
  auto K = parseRegionKind(Kind);
  if (!K)
    return Error::make(Path + ": unknown region kind '" + Kind + "'");
  Out.Kind = *K;
  if (Error E = moveInto(h5::readStringAttr(Id, "name"), Out.Name))
    return std::move(E).context(Path);
  if (Error E = moveInto(h5::readUnsignedAttr(Id, "changed"), Changed))
    return std::move(E).context(Path);
  Out.Changed = Changed != 0;
  std::string Post = format::regionPath(L, R, Phase::Post);
  if (Out.Changed) {
    if (auto S = checkedByteDataset(Post, Out.Size); !S)
      return S.takeError();
  } else if (h5::exists(File.get(), Post)) {
    return Error::make(Post + ": present, but the region is marked unchanged");
  }
  return Error::success();
}

Error CaptureReader::Impl::readLaunch(uint32_t Index) {
  std::string Path = format::launchPath(Index);
  auto G = h5::openGroup(File.get(), Path);
  if (!G)
    return G.takeError();
  LaunchInfo L;
  uint64_t RegionCount = 0;
  if (Error E = readLaunchAttrs(G->get(), L, Kernels.size(), RegionCount))
    return std::move(E).context(Path);
  if (Error E = checkParamLayout(Kernels[L.Kernel], L))
    return std::move(E).context(Path);
  // Grown as the regions are read: a damaged count must not size a vector
  // (the first region it claims beyond those stored is missing).
  for (uint64_t R = 0; R < RegionCount; ++R) {
    if (R > UINT32_MAX)
      return makeError(Path, ": ", RegionCount, " regions (a damaged count)");
    RegionInfo Region;
    R3_TRY(readRegionInfo(Index, static_cast<uint32_t>(R), Region));
    L.Regions.push_back(std::move(Region));
  }
  Launches.push_back(std::move(L));
  return Error::success();
}

Expected<std::unique_ptr<CaptureReader>>
CaptureReader::open(const std::string &Path) {
  auto I = std::make_unique<Impl>();
  I->Path = Path;
  if (!pathExists(Path))
    return Error::make(Path + ": no such file");
  if (Error E = checkSuperblockOf(Path))
    return std::move(E).context(Path);
  auto File = h5::openFile(Path);
  if (!File)
    return File.takeError().context(Path);
  I->File = std::move(*File);
  auto Fail = [&](Error E) { return std::move(E).context(Path); };
  if (Error E = I->readRoot())
    return Fail(std::move(E));
  if (Error E = I->readHeader())
    return Fail(std::move(E));
  uint64_t Counts[3];
  const char *Groups[3] = {"/modules", "/kernels", "/launches"};
  for (int G = 0; G < 3; ++G)
    if (Error E = moveInto(I->containerCount(Groups[G]), Counts[G]))
      return Fail(std::move(E));
  for (uint32_t M = 0; M < Counts[0]; ++M)
    if (Error E = I->readModule(M))
      return Fail(std::move(E));
  for (uint32_t K = 0; K < Counts[1]; ++K)
    if (Error E = I->readKernel(K))
      return Fail(std::move(E));
  for (uint32_t L = 0; L < Counts[2]; ++L)
    if (Error E = I->readLaunch(L))
      return Fail(std::move(E));
  return std::unique_ptr<CaptureReader>(new CaptureReader(std::move(I)));
}

Error CaptureReader::Impl::stream(const std::string &DsPath, uint64_t Size,
                                  const ByteSink &Sink) const {
  auto D = h5::openDataset(File.get(), DsPath);
  if (!D)
    return D.takeError().context(Path);
  uint64_t Chunk = h5::chunkBytesFor(Size);
  std::vector<uint8_t> Buf(Chunk);
  for (uint64_t Offset = 0; Offset < Size; Offset += Chunk) {
    std::span<uint8_t> Out(Buf.data(), std::min(Chunk, Size - Offset));
    if (Error E = h5::readBytes(D->get(), Offset, Out))
      return std::move(E).context(Path + ": " + DsPath);
    R3_TRY(Sink(Offset, Out));
  }
  return Error::success();
}

Expected<std::vector<uint8_t>> CaptureReader::readModule(uint32_t M) const {
  if (M >= P->Modules.size())
    return makeError(P->Path, ": module ", M, " does not exist");
  std::vector<uint8_t> Image(P->Modules[M].Size);
  auto Copy = [&](uint64_t Offset, std::span<const uint8_t> Bytes) {
    std::copy(Bytes.begin(), Bytes.end(), Image.begin() + Offset);
    return Error::success();
  };
  R3_TRY(P->stream(format::modulePath(M) + "/image", Image.size(), Copy));
  return Image;
}

namespace {
/// The dataset holding a region's bytes for a phase: an unchanged region's
/// bytes after the launch are its bytes before.
std::string regionDataset(const LaunchInfo &L, uint32_t Li, uint32_t R,
                          Phase P) {
  bool UsePost = P == Phase::Post && L.Regions[R].Changed;
  return format::regionPath(Li, R, UsePost ? Phase::Post : Phase::Pre);
}
} // namespace

Error CaptureReader::readRegion(uint32_t Launch, uint32_t Region, Phase Ph,
                                uint64_t Offset, std::span<uint8_t> Out) const {
  if (Launch >= P->Launches.size() ||
      Region >= P->Launches[Launch].Regions.size())
    return makeError(P->Path, ": launch ", Launch, " region ", Region,
                     " does not exist");
  const RegionInfo &R = P->Launches[Launch].Regions[Region];
  if (Offset > R.Size || Out.size() > R.Size - Offset)
    return makeError(P->Path, ": ", format::regionPath(Launch, Region, Ph),
                     ": read of ", Out.size(), " bytes at ", Offset,
                     " exceeds its size ", R.Size);
  std::string Ds = regionDataset(P->Launches[Launch], Launch, Region, Ph);
  auto D = h5::openDataset(P->File.get(), Ds);
  if (!D)
    return D.takeError().context(P->Path);
  if (Error E = h5::readBytes(D->get(), Offset, Out))
    return std::move(E).context(P->Path + ": " + Ds);
  return Error::success();
}

Error CaptureReader::streamRegion(uint32_t Launch, uint32_t Region, Phase Ph,
                                  const ByteSink &Sink) const {
  if (Launch >= P->Launches.size() ||
      Region >= P->Launches[Launch].Regions.size())
    return makeError(P->Path, ": launch ", Launch, " region ", Region,
                     " does not exist");
  const LaunchInfo &L = P->Launches[Launch];
  return P->stream(regionDataset(L, Launch, Region, Ph), L.Regions[Region].Size,
                   Sink);
}

Expected<uint64_t> CaptureReader::verifyData() const {
  uint64_t Total = 0;
  auto Count = [&](uint64_t, std::span<const uint8_t> Bytes) {
    Total += Bytes.size();
    return Error::success();
  };
  for (uint32_t M = 0; M < P->Modules.size(); ++M)
    R3_TRY(
        P->stream(format::modulePath(M) + "/image", P->Modules[M].Size, Count));
  for (uint32_t L = 0; L < P->Launches.size(); ++L)
    for (uint32_t R = 0; R < P->Launches[L].Regions.size(); ++R) {
      const RegionInfo &Reg = P->Launches[L].Regions[R];
      R3_TRY(P->stream(format::regionPath(L, R, Phase::Pre), Reg.Size, Count));
      if (Reg.Changed)
        R3_TRY(
            P->stream(format::regionPath(L, R, Phase::Post), Reg.Size, Count));
    }
  return Total;
}

} // namespace r3
