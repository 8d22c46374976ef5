// Capture writer: streams bulk bytes into chunked, checksummed datasets and
// writes the metadata tables at finish().
#include "capture/CaptureWriter.h"

#include "capture/Fletcher32.h"
#include "capture/Format.h"
#include "capture/Hdf5.h"
#include "r3/Version.h"
#include "support/FileUtil.h"

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace r3 {

struct CaptureWriter::Impl {
  std::string FinalPath, TempPath;
  h5::Handle File;
  h5::Compression Compress = h5::Compression::None;
  CaptureHeader Header;
  std::vector<ModuleInfo> Modules;
  std::vector<KernelInfo> Kernels;
  std::vector<LaunchInfo> Launches;
  std::vector<h5::Handle> LaunchGroups;
  std::vector<uint8_t> Buffer; // one chunk, reused for every region
  std::vector<uint8_t> Spare;  // the second one of streamChecksummed
  bool Finished = false;
  /// The temporary file again, to start its writeback early (wrote()).
  int WritebackFd = -1;
  uint64_t Unflushed = 0; ///< bulk bytes written since the last start

  ~Impl() {
    if (WritebackFd >= 0)
      ::close(WritebackFd);
  }
  void wrote(uint64_t Bytes);

  Error streamDataset(const std::string &Path, uint64_t Size,
                      const ByteSource &Src);
  Error streamFiltered(hid_t D, uint64_t Size, const ByteSource &Src);
  Error streamChecksummed(hid_t D, uint64_t Size, const ByteSource &Src);
  Error writeHeader();
  Error writeKernel(uint32_t K);
  Error writeLaunch(uint32_t L);
};

// finish() ends with an fsync, which would otherwise wait for every byte of
// a capture of many GiB to reach the disk only then (the kernel starts
// writing dirty pages back on its own only past a share of all memory). So
// every 64 MiB the writer asks for the file's dirty pages to be written back
// now, without waiting for it (SYNC_FILE_RANGE_WRITE): the disk works while
// the record stream is still arriving and the fsync finds little left.
void CaptureWriter::Impl::wrote(uint64_t Bytes) {
  constexpr uint64_t Every = 64ull << 20;
  Unflushed += Bytes;
  if (Unflushed < Every || WritebackFd < 0)
    return;
  Unflushed = 0;
  (void)::sync_file_range(WritebackFd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

ByteSource bytesFrom(std::span<const uint8_t> Bytes) {
  return [Bytes](uint64_t Offset, std::span<uint8_t> Out) {
    std::memcpy(Out.data(), Bytes.data() + Offset, Out.size());
    return Error::success();
  };
}

CaptureWriter::CaptureWriter(std::unique_ptr<Impl> I) : P(std::move(I)) {}

CaptureWriter::~CaptureWriter() {
  if (P && !P->Finished) {
    P->LaunchGroups.clear();
    P->File.reset();
    std::remove(P->TempPath.c_str());
  }
}

Expected<std::unique_ptr<CaptureWriter>>
CaptureWriter::create(const std::string &Path, const CaptureHeader &Header,
                      CaptureCompression Compression) {
  auto I = std::make_unique<Impl>();
  I->FinalPath = Path;
  I->TempPath = temporaryPathFor(Path);
  I->Header = Header;
  I->Header.Producer = std::string("r3 ") + Version;
  I->Compress = Compression == CaptureCompression::Deflate
                    ? h5::Compression::Deflate
                    : h5::Compression::None;
  auto File = h5::createFile(I->TempPath);
  if (!File)
    return File.takeError().context(Path);
  I->File = std::move(*File);
  I->WritebackFd = ::open(I->TempPath.c_str(), O_RDONLY | O_CLOEXEC);
  for (const char *G : {"/modules", "/kernels", "/launches"}) {
    auto Group = h5::createGroup(I->File.get(), G);
    if (!Group)
      return Group.takeError().context(Path);
  }
  return std::unique_ptr<CaptureWriter>(new CaptureWriter(std::move(I)));
}

// Uncompressed datasets (the default) bypass HDF5's filter pipeline: the
// chunk is read into a buffer with 4 bytes to spare, checksummed here and
// written as stored (H5Dwrite_chunk). The pipeline would copy every chunk
// into a fresh allocation twice (once to filter it, once more to append the
// checksum) and checksum it 16 bits at a time; the file is byte-for-byte what
// it writes. Deflate needs the pipeline, so compressed captures keep it.
Error CaptureWriter::Impl::streamDataset(const std::string &Path, uint64_t Size,
                                         const ByteSource &Src) {
  if (Size == 0)
    return Error::make(Path + ": zero-length region");
  auto D = h5::createByteDataset(File.get(), Path, Size, Compress);
  if (!D)
    return D.takeError();
  Error E = Compress == h5::Compression::None
                ? streamChecksummed(D->get(), Size, Src)
                : streamFiltered(D->get(), Size, Src);
  return std::move(E).context(Path);
}

/// Fills Buffer (a chunk and 4 bytes) with the chunk at Offset and its
/// checksum, as HDF5 stores it.
static Error fillChunk(const ByteSource &Src, uint64_t Offset, uint64_t N,
                       uint64_t Chunk, std::vector<uint8_t> &Buffer) {
  R3_TRY(Src(Offset, std::span(Buffer.data(), N)));
  // HDF5 stores an edge chunk whole, zeros past the end included.
  std::memset(Buffer.data() + N, 0, Chunk - N);
  uint32_t Sum = fletcher32(std::span(Buffer.data(), Chunk));
  storeFletcher32(Sum, Buffer.data() + Chunk);
  return Error::success();
}

// A dataset of more than one chunk is a pipeline of two buffers: a second
// thread reads the source (the record stream) into one and checksums it
// while this thread writes the other, so writing (a copy into the page
// cache, the largest cost) never waits for reading and checksumming. HDF5 is
// only ever called from this thread.
Error CaptureWriter::Impl::streamChecksummed(hid_t D, uint64_t Size,
                                             const ByteSource &Src) {
  constexpr uint64_t SumBytes = 4;
  uint64_t Chunk = h5::chunkBytesFor(Size);
  uint64_t Chunks = (Size + Chunk - 1) / Chunk;
  Buffer.resize(Chunk + SumBytes);
  if (Chunks == 1) {
    R3_TRY(fillChunk(Src, 0, Size, Chunk, Buffer));
    R3_TRY(h5::writeRawChunk(D, 0, Buffer));
    wrote(Buffer.size());
    return Error::success();
  }
  Spare.resize(Chunk + SumBytes);
  std::vector<uint8_t> *Buffers[2] = {&Buffer, &Spare};
  std::mutex Lock;
  std::condition_variable Changed;
  uint64_t Filled = 0, Written = 0; // chunks
  bool Stop = false;
  Error ReadError = Error::success();
  std::thread Reader([&] {
    for (uint64_t K = 0; K < Chunks; ++K) {
      {
        std::unique_lock<std::mutex> L(Lock);
        Changed.wait(L, [&] { return Stop || K < Written + 2; });
        if (Stop)
          return;
      }
      uint64_t Offset = K * Chunk;
      Error E = fillChunk(Src, Offset, std::min(Chunk, Size - Offset), Chunk,
                          *Buffers[K % 2]);
      std::lock_guard<std::mutex> L(Lock);
      if (E) {
        ReadError = std::move(E);
        Stop = true;
      } else {
        ++Filled;
      }
      Changed.notify_all();
      if (Stop)
        return;
    }
  });
  Error WriteError = Error::success();
  for (uint64_t K = 0; K < Chunks; ++K) {
    {
      std::unique_lock<std::mutex> L(Lock);
      Changed.wait(L, [&] { return Stop || K < Filled; });
      if (K >= Filled)
        break; // the reader failed
    }
    WriteError = h5::writeRawChunk(D, K * Chunk, *Buffers[K % 2]);
    wrote(Chunk + SumBytes);
    std::lock_guard<std::mutex> L(Lock);
    if (WriteError)
      Stop = true;
    else
      ++Written;
    Changed.notify_all();
    if (WriteError)
      break;
  }
  Reader.join();
  if (ReadError)
    return ReadError;
  return WriteError;
}

Error CaptureWriter::Impl::streamFiltered(hid_t D, uint64_t Size,
                                          const ByteSource &Src) {
  uint64_t Chunk = h5::chunkBytesFor(Size);
  Buffer.resize(Chunk);
  for (uint64_t Offset = 0; Offset < Size; Offset += Chunk) {
    std::span<uint8_t> Out(Buffer.data(), std::min(Chunk, Size - Offset));
    R3_TRY(Src(Offset, Out));
    R3_TRY(h5::writeBytes(D, Offset, Out));
    wrote(Out.size());
  }
  return Error::success();
}

Expected<uint32_t> CaptureWriter::addModule(ModuleKind Kind,
                                            std::span<const uint8_t> Image) {
  uint32_t M = P->Modules.size();
  auto G = h5::createGroup(P->File.get(), format::modulePath(M));
  if (!G)
    return G.takeError();
  R3_TRY(h5::writeAttr(G->get(), "kind", std::string(moduleKindName(Kind))));
  R3_TRY(P->streamDataset(format::modulePath(M) + "/image", Image.size(),
                          bytesFrom(Image)));
  P->Modules.push_back({Kind, Image.size()});
  return M;
}

Expected<uint32_t> CaptureWriter::addKernel(const KernelInfo &Kernel) {
  if (Kernel.Module >= P->Modules.size())
    return makeError("kernel '", Kernel.Name, "': module ", Kernel.Module,
                     " was not added");
  P->Kernels.push_back(Kernel);
  return static_cast<uint32_t>(P->Kernels.size() - 1);
}

Expected<uint32_t> CaptureWriter::beginLaunch(const LaunchInfo &Launch) {
  if (Launch.Kernel >= P->Kernels.size())
    return makeError("launch: kernel ", Launch.Kernel, " was not added");
  uint32_t L = P->Launches.size();
  auto G = h5::createGroup(P->File.get(), format::launchPath(L));
  if (!G)
    return G.takeError();
  for (const char *Sub : {"pre", "post"})
    if (auto S = h5::createGroup(G->get(), Sub); !S)
      return S.takeError().context(format::launchPath(L));
  P->Launches.push_back(Launch);
  P->Launches.back().Regions.clear();
  P->LaunchGroups.push_back(std::move(*G));
  return L;
}

Expected<uint32_t> CaptureWriter::addRegion(uint32_t Launch,
                                            const RegionInfo &Region,
                                            const ByteSource &Before) {
  if (Launch >= P->Launches.size())
    return makeError("region: launch ", Launch, " was not begun");
  auto &Regions = P->Launches[Launch].Regions;
  uint32_t R = Regions.size();
  R3_TRY(P->streamDataset(format::regionPath(Launch, R, Phase::Pre),
                          Region.Size, Before));
  Regions.push_back(Region);
  Regions.back().Changed = false;
  return R;
}

Error CaptureWriter::addChangedRegion(uint32_t Launch, uint32_t Region,
                                      const ByteSource &After) {
  if (Launch >= P->Launches.size() ||
      Region >= P->Launches[Launch].Regions.size())
    return makeError("changed region: launch ", Launch, " region ", Region,
                     " was not added");
  RegionInfo &R = P->Launches[Launch].Regions[Region];
  if (R.Changed)
    return makeError(format::regionPath(Launch, Region, Phase::Post),
                     ": written twice");
  R3_TRY(P->streamDataset(format::regionPath(Launch, Region, Phase::Post),
                          R.Size, After));
  R.Changed = true;
  return Error::success();
}

void CaptureWriter::setLaunchDuration(uint32_t Launch, uint64_t Nanoseconds) {
  if (Launch < P->Launches.size())
    P->Launches[Launch].DurationNs = Nanoseconds;
}

void CaptureWriter::addAppDuration(uint32_t Kernel, uint64_t Nanoseconds) {
  if (Kernel < P->Kernels.size())
    P->Kernels[Kernel].AppDurationsNs.push_back(Nanoseconds);
}

Error CaptureWriter::Impl::writeHeader() {
  hid_t Root = File.get();
  R3_TRY(h5::writeAttr(Root, format::MagicAttr, std::string(format::Magic)));
  R3_TRY(
      h5::writeAttr(Root, format::VersionAttr, uint64_t(CaptureFormatVersion)));
  R3_TRY(h5::writeAttr(Root, "producer", Header.Producer));
  R3_TRY(
      h5::writeAttr(Root, "backend", std::string(backendName(Header.Source))));
  auto Dev = h5::createGroup(Root, "/device");
  if (!Dev)
    return Dev.takeError();
  const DeviceInfo &D = Header.Device;
  R3_TRY(h5::writeAttr(Dev->get(), "name", D.Name));
  R3_TRY(h5::writeAttr(Dev->get(), "compute_major", int64_t(D.ComputeMajor)));
  R3_TRY(h5::writeAttr(Dev->get(), "compute_minor", int64_t(D.ComputeMinor)));
  R3_TRY(h5::writeAttr(Dev->get(), "driver_version", int64_t(D.DriverVersion)));
  R3_TRY(h5::writeAttr(Dev->get(), "memory_bytes", D.MemoryBytes));
  R3_TRY(h5::writeAttr(Dev->get(), "ordinal", int64_t(D.Ordinal)));
  R3_TRY(h5::writeAttr(Dev->get(), "pci_bus_id", D.PciBusId));
  auto App = h5::createGroup(Root, "/application");
  if (!App)
    return App.takeError();
  R3_TRY(
      h5::writeStringDataset(App->get(), "command_line", Header.CommandLine));
  R3_TRY(h5::writeStringDataset(App->get(), "environment", Header.Environment));
  for (auto [G, N] : {std::pair{"/modules", Modules.size()},
                      {"/kernels", Kernels.size()},
                      {"/launches", Launches.size()}}) {
    auto Group = h5::openGroup(Root, G);
    if (!Group)
      return Group.takeError();
    R3_TRY(h5::writeAttr(Group->get(), format::CountAttr, uint64_t(N)));
  }
  return Error::success();
}

Error CaptureWriter::Impl::writeKernel(uint32_t K) {
  const KernelInfo &Info = Kernels[K];
  auto G = h5::createGroup(File.get(), format::kernelPath(K));
  if (!G)
    return G.takeError();
  hid_t Id = G->get();
  R3_TRY(h5::writeAttr(Id, "name", Info.Name));
  R3_TRY(h5::writeAttr(Id, "demangled", Info.Demangled));
  R3_TRY(h5::writeAttr(Id, "module", uint64_t(Info.Module)));
  const FunctionAttributes &A = Info.Attributes;
  R3_TRY(h5::writeAttr(Id, "registers", A.Registers));
  R3_TRY(h5::writeAttr(Id, "static_shared_bytes", A.StaticSharedBytes));
  R3_TRY(h5::writeAttr(Id, "max_threads_per_block", A.MaxThreadsPerBlock));
  R3_TRY(h5::writeAttr(Id, "local_bytes", A.LocalBytes));
  std::vector<uint64_t> Offsets, Sizes, GlobalAddrs, GlobalSizes;
  std::vector<std::string> GlobalNames;
  for (const ParamInfo &Param : Info.Params) {
    Offsets.push_back(Param.Offset);
    Sizes.push_back(Param.Size);
  }
  for (const GlobalInfo &Gl : Info.Globals) {
    GlobalNames.push_back(Gl.Name);
    GlobalAddrs.push_back(Gl.Address);
    GlobalSizes.push_back(Gl.Size);
  }
  R3_TRY(h5::writeU64Dataset(Id, "param_offsets", Offsets));
  R3_TRY(h5::writeU64Dataset(Id, "param_sizes", Sizes));
  R3_TRY(h5::writeStringDataset(Id, "global_names", GlobalNames));
  R3_TRY(h5::writeU64Dataset(Id, "global_addresses", GlobalAddrs));
  R3_TRY(h5::writeU64Dataset(Id, "global_sizes", GlobalSizes));
  return h5::writeU64Dataset(Id, "app_durations_ns", Info.AppDurationsNs);
}

Error CaptureWriter::Impl::writeLaunch(uint32_t L) {
  const LaunchInfo &Info = Launches[L];
  hid_t Id = LaunchGroups[L].get();
  R3_TRY(h5::writeAttr(Id, "kernel", uint64_t(Info.Kernel)));
  R3_TRY(h5::writeAttr(Id, "ordinal", Info.Ordinal));
  R3_TRY(h5::writeAttr(Id, "grid", std::span<const uint32_t>(Info.Grid)));
  R3_TRY(h5::writeAttr(Id, "block", std::span<const uint32_t>(Info.Block)));
  R3_TRY(h5::writeAttr(Id, "dynamic_shared_bytes",
                       uint64_t(Info.DynamicSharedBytes)));
  R3_TRY(h5::writeAttr(Id, "region_count", uint64_t(Info.Regions.size())));
  if (Info.DurationNs)
    R3_TRY(h5::writeAttr(Id, "duration_ns", *Info.DurationNs));
  // The parameter buffer is small: a plain contiguous dataset.
  if (Error E = h5::writeSmallBytes(Id, "params", Info.Params))
    return std::move(E).context(format::launchPath(L));
  for (uint32_t R = 0; R < Info.Regions.size(); ++R) {
    const RegionInfo &Reg = Info.Regions[R];
    auto DS = h5::openDataset(File.get(), format::regionPath(L, R, Phase::Pre));
    if (!DS)
      return DS.takeError();
    R3_TRY(h5::writeAttr(DS->get(), "base", Reg.Base));
    R3_TRY(h5::writeAttr(DS->get(), "kind",
                         std::string(regionKindName(Reg.Kind))));
    R3_TRY(h5::writeAttr(DS->get(), "name", Reg.Name));
    R3_TRY(h5::writeAttr(DS->get(), "changed", uint64_t(Reg.Changed)));
  }
  return Error::success();
}

Error CaptureWriter::finish() {
  auto Fail = [&](Error E) { return std::move(E).context(P->FinalPath); };
  if (P->Finished)
    return Fail(Error::make("capture already finished"));
  if (Error E = P->writeHeader())
    return Fail(std::move(E));
  for (uint32_t K = 0; K < P->Kernels.size(); ++K)
    if (Error E = P->writeKernel(K))
      return Fail(std::move(E));
  for (uint32_t L = 0; L < P->Launches.size(); ++L)
    if (Error E = P->writeLaunch(L))
      return Fail(std::move(E));
  // The completeness mark goes last: a file without it was not finished.
  if (Error E = h5::writeAttr(P->File.get(), format::CompleteAttr, uint64_t(1)))
    return Fail(std::move(E));
  P->LaunchGroups.clear();
  if (H5Fflush(P->File.get(), H5F_SCOPE_GLOBAL) < 0)
    return Fail(h5::lastError("cannot flush"));
  P->File.reset();
  if (Error E = commitTemporary(P->TempPath, P->FinalPath))
    return E;
  P->Finished = true;
  return Error::success();
}

} // namespace r3
