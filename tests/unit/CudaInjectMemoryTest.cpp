// The injection library's memory tracking beyond cuMemAlloc, from CUPTI
// parameter structs built by hand: VMM mappings (map, access, unmap, a
// released handle's mapping still live), pinned host memory the device can
// reach (allocated, registered with and without DEVICEMAP, moved to the
// address cuMemHostGetDevicePointer gives, freed), which contexts and devices
// reach what, and the snapshot's pre/post logic over host buffers standing in
// for device memory (which regions changed, chunk by chunk).
#include "Catch.h"

#include "record/Messages.h"
#include "record/cuda/DeviceMemory.h"
#include "record/cuda/Snapshot.h"

#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace r3;
using namespace r3::cuda;

namespace {
CUcontext context(uintptr_t N) { return reinterpret_cast<CUcontext>(N); }
const CUcontext Ctx0 = context(0xc0), Ctx1 = context(0xc1);

void call(DeviceMemory &M, CUpti_CallbackId Id, const void *P,
          CUcontext Ctx = Ctx0, CUresult R = CUDA_SUCCESS) {
  M.onApiExit(Id, P, R, Ctx);
}

void mapVmm(DeviceMemory &M, CUdeviceptr Va, size_t Size) {
  cuMemMap_params P{Va, Size, 0, 0x42, 0};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &P);
}

void setAccess(DeviceMemory &M, CUdeviceptr Va, size_t Size, int Device,
               CUmemAccess_flags Flags) {
  CUmemAccessDesc D{};
  D.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  D.location.id = Device;
  D.flags = Flags;
  cuMemSetAccess_params P{Va, Size, &D, 1};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemSetAccess, &P);
}

void *hostAddress(uint64_t A) { return reinterpret_cast<void *>(A); }
} // namespace

TEST_CASE("cuda inject: VMM mappings are device regions while mapped",
          "[cuda]") {
  DeviceMemory M;
  CUmemGenericAllocationHandle H = 0x42;
  CUmemAllocationProp Prop{};
  Prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  Prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  cuMemCreate_params Create{&H, 4 << 20, &Prop, 0};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &Create);
  CHECK(M.live().empty()); // physical memory alone has no address

  const CUdeviceptr Va = 0x7f4000000000, Second = Va + (2 << 20);
  mapVmm(M, Va, 2 << 20);
  mapVmm(M, Second, 2 << 20); // the rest of a reserved range
  std::vector<DeviceAllocation> L = M.live();
  REQUIRE(L.size() == 2);
  CHECK(L[0].Base == Va);
  CHECK(L[0].Size == 2 << 20);
  CHECK(L[0].Kind == RegionKind::Device);
  CHECK(L[1].Base == Second);
  // Mapped, but no device may access it yet: a launch cannot reach it.
  CHECK(M.reachableFrom(Ctx0, 0).empty());
  setAccess(M, Va, 4 << 20, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CHECK(M.reachableFrom(Ctx0, 0).size() == 2);
  CHECK(M.reachableFrom(Ctx1, 0).size() == 2); // any context of device 0
  CHECK(M.reachableFrom(Ctx1, 1).empty());
  setAccess(M, Second, 2 << 20, 1, CU_MEM_ACCESS_FLAGS_PROT_READ);
  CHECK(M.reachableFrom(Ctx1, 1).size() == 1);
  setAccess(M, Second, 2 << 20, 1, CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK(M.reachableFrom(Ctx1, 1).empty());

  // Releasing the handle does not end its mappings; unmapping does.
  cuMemRelease_params Release{H};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemRelease, &Release);
  CHECK(M.live().size() == 2);
  cuMemUnmap_params Unmap{Second, 2 << 20};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, &Unmap);
  L = M.live();
  REQUIRE(L.size() == 1);
  CHECK(L[0].Base == Va);
  cuMemUnmap_params All{Va, 4 << 20};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, &All);
  CHECK(M.live().empty());

  // A failed map maps nothing; a mapping made again starts without access.
  cuMemMap_params Failed{Va, 2 << 20, 0, H, 0};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemMap, &Failed, Ctx0,
       CUDA_ERROR_INVALID_VALUE);
  CHECK(M.live().empty());
  mapVmm(M, Va, 2 << 20);
  CHECK(M.reachableFrom(Ctx0, 0).empty());
}

TEST_CASE("cuda inject: pinned host memory is a host_mapped region at its "
          "device address",
          "[cuda]") {
  DeviceMemory M;
  void *Pinned = hostAddress(0x7f1000000000);
  cuMemAllocHost_v2_params AllocHost{&Pinned, 4096};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, &AllocHost);
  void *Mapped = hostAddress(0x7f1000100000);
  cuMemHostAlloc_params HostAlloc{&Mapped, 8192, CU_MEMHOSTALLOC_DEVICEMAP};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, &HostAlloc);
  // Write-combined memory has a device address of its own, known only once
  // cuMemHostGetDevicePointer tells it.
  void *Combined = hostAddress(0x7f1000200000);
  cuMemHostAlloc_params Wc{&Combined, 256, CU_MEMHOSTALLOC_WRITECOMBINED};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, &Wc);
  // Registered memory: mapped with DEVICEMAP only.
  void *Registered = hostAddress(0x7f1000300000);
  cuMemHostRegister_v2_params Reg{Registered, 1 << 20,
                                  CU_MEMHOSTREGISTER_DEVICEMAP};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2, &Reg);
  void *Unmapped = hostAddress(0x7f1000400000);
  cuMemHostRegister_v2_params Plain{Unmapped, 4096, 0};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2, &Plain);

  std::vector<DeviceAllocation> L = M.live();
  REQUIRE(L.size() == 3);
  CHECK(L[0].Base == 0x7f1000000000);
  CHECK(L[0].Size == 4096);
  CHECK(L[0].Kind == RegionKind::HostMapped);
  CHECK(L[1].Base == 0x7f1000100000);
  CHECK(L[1].Size == 8192);
  CHECK(L[2].Base == 0x7f1000300000);
  CHECK(L[2].Kind == RegionKind::HostMapped);
  // Host allocations reach every context; registered memory without
  // PORTABLE only the registering one.
  CHECK(M.reachableFrom(Ctx1, 1).size() == 2);
  CHECK(M.reachableFrom(Ctx0, 0).size() == 3);

  CUdeviceptr WcDevice = 0x7f2000000000;
  cuMemHostGetDevicePointer_v2_params Get{&WcDevice, Combined, 0};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostGetDevicePointer_v2, &Get);
  // Registered memory the device sees elsewhere moves there, once: an
  // address inside the range gives the range's device base.
  CUdeviceptr RegDevice = 0x7f3000000100;
  cuMemHostGetDevicePointer_v2_params Inside{&RegDevice,
                                             hostAddress(0x7f1000300100), 0};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostGetDevicePointer_v2, &Inside);
  L = M.live();
  REQUIRE(L.size() == 4);
  CHECK(L[2].Base == 0x7f2000000000);
  CHECK(L[2].Size == 256);
  CHECK(L[3].Base == 0x7f3000000000);
  CHECK(L[3].Size == 1 << 20);
  // Asking for the pointer of unpinned memory changes nothing.
  CUdeviceptr Stray = 0x1000;
  cuMemHostGetDevicePointer_v2_params Unknown{&Stray, hostAddress(0x5000), 0};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostGetDevicePointer_v2, &Unknown);
  CHECK(M.live().size() == 4);

  cuMemFreeHost_params Free{Pinned};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, &Free);
  cuMemFreeHost_params FreeWc{Combined};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, &FreeWc);
  cuMemHostUnregister_params Unreg{Registered};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister, &Unreg);
  L = M.live();
  REQUIRE(L.size() == 1);
  CHECK(L[0].Base == 0x7f1000100000);
}

TEST_CASE("cuda inject: allocations of another context are not reached",
          "[cuda]") {
  DeviceMemory M;
  CUdeviceptr A = 0x7f0000000000, B = 0x7f0100000000, Managed = 0x7e0000000000;
  cuMemAlloc_v2_params PA{&A, 4096};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &PA, Ctx0);
  cuMemAlloc_v2_params PB{&B, 4096};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &PB, Ctx1);
  cuMemAllocManaged_params PM{&Managed, 64, CU_MEM_ATTACH_GLOBAL};
  call(M, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, &PM, Ctx1);
  CHECK(M.live().size() == 3);
  std::vector<DeviceAllocation> R0 = M.reachableFrom(Ctx0, 0);
  REQUIRE(R0.size() == 2);
  CHECK(R0[0].Base == Managed); // managed memory reaches every context
  CHECK(R0[1].Base == A);
  std::vector<DeviceAllocation> R1 = M.reachableFrom(Ctx1, 1);
  REQUIRE(R1.size() == 2);
  CHECK(R1[1].Base == B);
}

// --- snapshots over host buffers ---

namespace {
/// The "device": two buffers at fake addresses, read by the snapshot's copy.
struct FakeDevice {
  std::vector<uint8_t> A = std::vector<uint8_t>(1000, 1);
  std::vector<uint8_t> B = std::vector<uint8_t>(64, 2);
  static constexpr uint64_t BaseA = 0x10000, BaseB = 0x20000;
  unsigned Copies = 0;
};
FakeDevice *Device = nullptr;

Error fakeCopy(void *Dst, uint64_t Src, uint64_t Size) {
  ++Device->Copies;
  std::vector<uint8_t> &V = Src >= FakeDevice::BaseB ? Device->B : Device->A;
  uint64_t Base =
      Src >= FakeDevice::BaseB ? FakeDevice::BaseB : FakeDevice::BaseA;
  if (Src + Size > Base + V.size())
    return Error::make("copy out of range");
  std::memcpy(Dst, V.data() + (Src - Base), Size);
  return Error::success();
}
Expected<void *> fakeAllocate(uint64_t Size) { return std::malloc(Size); }
void fakeFree(void *P) { std::free(P); }

/// The Region frames in a stream file: (phase, index, bytes).
struct Sent {
  Phase Side;
  uint64_t Index;
  std::vector<uint8_t> Bytes;
};

std::vector<Sent> readRegions(int Fd) {
  std::vector<Sent> Out;
  ::lseek(Fd, 0, SEEK_SET);
  for (;;) {
    wire::FrameHeader H;
    bool AtEnd = false;
    REQUIRE_FALSE(wire::readHeader(Fd, H, AtEnd));
    if (AtEnd)
      return Out;
    std::vector<uint8_t> Meta(H.MetaLength), Bulk(H.BulkLength);
    REQUIRE_FALSE(wire::readExactly(Fd, Meta));
    REQUIRE_FALSE(wire::readExactly(Fd, Bulk));
    REQUIRE(H.Kind == wire::Type::Region);
    wire::RegionMsg M;
    REQUIRE_FALSE(wire::decode(Meta, M));
    Out.push_back({M.Side, M.Index, std::move(Bulk)});
  }
}
} // namespace

TEST_CASE("cuda inject: a snapshot sends every region before and the "
          "changed ones after",
          "[cuda]") {
  FakeDevice D;
  Device = &D;
  SnapshotIo Io{fakeCopy, fakeAllocate, fakeFree, 256}; // 4 chunks for A
  std::FILE *F = std::tmpfile();
  REQUIRE(F);
  wire::FrameWriter W(::fileno(F));
  std::vector<RegionInfo> Infos = {
      {FakeDevice::BaseA, 1000, RegionKind::Device, "", false},
      {FakeDevice::BaseB, 64, RegionKind::HostMapped, "", false}};
  {
    Snapshot S(Infos, {&W}, Io);
    REQUIRE_FALSE(S.sendPre(0));
    // The kernel writes one byte of A's last, partial chunk.
    D.A[999] = 7;
    REQUIRE_FALSE(S.sendPost(0));
  }
  std::vector<Sent> R = readRegions(::fileno(F));
  REQUIRE(R.size() == 3);
  CHECK(R[0].Side == Phase::Pre);
  CHECK(R[0].Bytes == std::vector<uint8_t>(1000, 1));
  CHECK(R[1].Side == Phase::Pre);
  CHECK(R[1].Index == 1);
  CHECK(R[1].Bytes == std::vector<uint8_t>(64, 2));
  CHECK(R[2].Side == Phase::Post);
  CHECK(R[2].Index == 0);
  CHECK(R[2].Bytes == D.A); // whole, not a diff
  std::fclose(F);
}

TEST_CASE("cuda inject: an unchanged snapshot sends no post-state", "[cuda]") {
  FakeDevice D;
  Device = &D;
  SnapshotIo Io{fakeCopy, fakeAllocate, fakeFree, 256};
  std::FILE *F = std::tmpfile();
  REQUIRE(F);
  wire::FrameWriter W(::fileno(F));
  {
    Snapshot S({{FakeDevice::BaseA, 1000, RegionKind::Device, "", false}}, {&W},
               Io);
    REQUIRE_FALSE(S.sendPre(3));
    unsigned PreCopies = D.Copies;
    CHECK(PreCopies == 4);
    // A change in the first chunk is found without reading the rest.
    D.A[0] = 9;
    REQUIRE_FALSE(S.sendPost(3));
    CHECK(D.Copies == PreCopies + 1 + 4);
  }
  {
    FakeDevice Same;
    Device = &Same;
    Snapshot S({{FakeDevice::BaseB, 64, RegionKind::Device, "", false}}, {&W},
               Io);
    REQUIRE_FALSE(S.sendPre(4));
    REQUIRE_FALSE(S.sendPost(4));
  }
  std::vector<Sent> R = readRegions(::fileno(F));
  REQUIRE(R.size() == 3); // pre and post of launch 3, pre of launch 4
  CHECK(R[1].Side == Phase::Post);
  CHECK(R[1].Bytes[0] == 9);
  CHECK(R[2].Side == Phase::Pre);
  std::fclose(F);
}

namespace {
/// The parent's side of a ring snapshot, by hand: every Region frame with
/// the bytes of its RingChunk frames, each slot given back once read.
std::vector<Sent> readRingRegions(int Fd, const wire::BulkRing &Ring,
                                  unsigned &MaxChunk) {
  std::vector<Sent> Out;
  for (;;) {
    wire::FrameHeader H;
    bool AtEnd = false;
    REQUIRE_FALSE(wire::readHeader(Fd, H, AtEnd));
    if (AtEnd)
      return Out;
    std::vector<uint8_t> Meta(H.MetaLength);
    REQUIRE_FALSE(wire::readExactly(Fd, Meta));
    REQUIRE(H.BulkLength == 0);
    if (H.Kind == wire::Type::Region) {
      wire::RegionMsg M;
      REQUIRE_FALSE(wire::decode(Meta, M));
      REQUIRE(M.ViaRing);
      Out.push_back({M.Side, M.Index, {}});
      continue;
    }
    REQUIRE(H.Kind == wire::Type::RingChunk);
    wire::RingChunkMsg C;
    REQUIRE_FALSE(wire::decode(Meta, C));
    REQUIRE(C.Slot < Ring.geometry().Slots);
    MaxChunk = std::max<unsigned>(MaxChunk, C.Bytes);
    const uint8_t *P = Ring.slot(C.Slot);
    Out.back().Bytes.insert(Out.back().Bytes.end(), P, P + C.Bytes);
    REQUIRE(::send(Fd, &C.Slot, sizeof(C.Slot), 0) == sizeof(C.Slot));
  }
}
} // namespace

TEST_CASE("cuda inject: a snapshot through the bulk ring", "[cuda]") {
  for (bool Direct : {true, false}) {
    DYNAMIC_SECTION("copies " << (Direct ? "into slots" : "through staging")) {
      FakeDevice D;
      Device = &D;
      for (size_t I = 0; I < D.A.size(); ++I)
        D.A[I] = uint8_t(I * 7);
      int Fds[2];
      REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, Fds) == 0);
      wire::RingGeometry G{2, 4096};
      auto Ring = wire::BulkRing::create(G);
      REQUIRE(Ring);
      auto Mine = wire::BulkRing::attach(::dup(Ring->fd()), G);
      REQUIRE(Mine);
      // Pieces of 256 bytes: A's 1000 take four, more than the two slots.
      SnapshotIo Io{fakeCopy, fakeAllocate, fakeFree, 256};
      Error SendError = Error::success();
      std::thread Sender([&] {
        wire::FrameWriter W(Fds[1], wire::SendMode::SocketNoSignal);
        wire::RingWriter R(std::move(*Mine), Fds[1], W);
        Snapshot S({{FakeDevice::BaseA, 1000, RegionKind::Device, "", false},
                    {FakeDevice::BaseB, 64, RegionKind::Device, "", false}},
                   {&W, &R, Direct}, Io);
        SendError = S.sendPre(0);
        D.A[600] ^= 0xFF; // the kernel changes one byte of A's third piece
        if (!SendError)
          SendError = S.sendPost(0);
        ::shutdown(Fds[1], SHUT_WR);
      });
      unsigned MaxChunk = 0;
      std::vector<Sent> R = readRingRegions(Fds[0], *Ring, MaxChunk);
      Sender.join();
      ::close(Fds[0]);
      ::close(Fds[1]);
      REQUIRE_FALSE(SendError);
      CHECK(MaxChunk == 256);
      REQUIRE(R.size() == 3);
      CHECK(R[0].Side == Phase::Pre);
      std::vector<uint8_t> Before = D.A;
      Before[600] ^= 0xFF;
      CHECK(R[0].Bytes == Before);
      CHECK(R[1].Bytes == D.B);
      CHECK(R[2].Side == Phase::Post);
      CHECK(R[2].Index == 0);
      CHECK(R[2].Bytes == D.A);
    }
  }
}

TEST_CASE("cuda inject: piece hashes see every one-word change", "[cuda]") {
  std::vector<uint8_t> Bytes(4096 + 13);
  for (size_t I = 0; I < Bytes.size(); ++I)
    Bytes[I] = uint8_t(I * 31 + 5);
  PieceHash Base = hashPiece(Bytes);
  CHECK(hashPiece(Bytes) == Base);
  // Any single byte, in every lane and in the zero-padded tail.
  for (size_t I = 0; I < Bytes.size(); I += 97) {
    Bytes[I] ^= 1;
    CHECK(hashPiece(Bytes) != Base);
    Bytes[I] ^= 1;
  }
  Bytes.back() ^= 0x80;
  CHECK(hashPiece(Bytes) != Base);
  Bytes.back() ^= 0x80;
  // Words that trade places between lanes, and a zero appended.
  std::swap(Bytes[0], Bytes[8]);
  CHECK(hashPiece(Bytes) != Base);
  std::swap(Bytes[0], Bytes[8]);
  std::vector<uint8_t> Longer = Bytes;
  Longer.push_back(0);
  CHECK(hashPiece(Longer) != Base);
}
