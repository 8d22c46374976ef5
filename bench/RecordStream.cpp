// Benchmark (not a test): the host half of recording one CUDA launch, which is
// what decides snapshot throughput once the device-to-host copy (tens of GB/s
// into pinned memory) is out of the way. A forked child plays the injected
// library: the real Snapshot code, with "device" buffers in host memory and
// memcpy standing in for cuMemcpy, sends the pre-state of every buffer and the
// post-state of the changed ones the way `r3 record` receives them (through
// the bulk ring, as r3 record does, and through the socket alone, as before
// the ring); the parent runs the real receiveCapture, writing HDF5 to DIR.
// Beside it, in the same run, the ceilings of this machine: memory straight
// into write(2) + fsync of a plain file (no second process: the most any
// recorder can store), the socket alone (the parent discards), and the socket
// into that plain file. The plain files start their writeback every 64 MiB
// as the capture writer does, so the comparison is like for like.
//
//   r3-bench-record-stream [--gib N] [--buffer-mib M] [--changed K] [--dir D]
//
// Defaults imitate bench/cuda-record's snapshot_app: 1 GiB in 256 MiB buffers,
// one changed (1.34 GB stored). Prints one row per case, GB stored over the
// whole transfer (the capture's fsync included), and the ratio to the rate of
// memory into the plain file.
#include "record/CaptureSink.h"
#include "record/Messages.h"
#include "record/Protocol.h"
#include "record/Ring.h"
#include "record/cuda/Snapshot.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace r3;

namespace {
struct Options {
  double Gib = 1;
  uint64_t BufferMib = 256;
  uint64_t Changed = 1;
  std::string Dir = ".";
};

/// The benchmark's device memory: host buffers the child snapshots.
struct FakeDevice {
  std::vector<uint8_t *> Buffers;
  uint64_t BufferBytes = 0;
};

Error hostCopy(void *Dst, uint64_t Src, uint64_t Size) {
  std::memcpy(Dst, reinterpret_cast<const void *>(Src), Size);
  return Error::success();
}

Expected<void *> hostAllocate(uint64_t Size) {
  void *P = std::aligned_alloc(4096, (Size + 4095) / 4096 * 4096);
  if (!P)
    return Error::make("out of memory for the staging buffer");
  return P;
}

void hostFree(void *P) { std::free(P); }

/// Fills the buffers with words that differ everywhere (as snapshot_app's
/// kernel writes them), so nothing in the path can skip zeros.
FakeDevice makeDevice(const Options &O) {
  FakeDevice D;
  D.BufferBytes = O.BufferMib << 20;
  uint64_t N = static_cast<uint64_t>(O.Gib * (1ull << 30)) / D.BufferBytes;
  for (uint64_t B = 0; B < N; ++B) {
    auto *P = static_cast<uint8_t *>(std::aligned_alloc(4096, D.BufferBytes));
    auto *W = reinterpret_cast<uint32_t *>(P);
    for (uint64_t I = 0; I < D.BufferBytes / 4; ++I)
      W[I] = uint32_t(I) * 2654435761u + uint32_t(B);
    D.Buffers.push_back(P);
  }
  return D;
}

uint64_t storedBytes(const FakeDevice &D, const Options &O) {
  return D.BufferBytes *
         (D.Buffers.size() + std::min<uint64_t>(O.Changed, D.Buffers.size()));
}

double seconds(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
      .count();
}

// ---- the child: the injected library's side --------------------------------

Error sendPreamble(wire::FrameWriter &W) {
  wire::HelloMsg H;
  H.Pid = ::getpid();
  H.Device.Name = "benchmark";
  R3_TRY(W.send(wire::Type::Hello, wire::encode(H)));
  std::vector<uint8_t> Image(4096, 7);
  R3_TRY(W.send(wire::Type::Module, wire::encode(wire::ModuleMsg{1}), Image));
  wire::KernelMsg K;
  K.Id = 2;
  K.ModuleId = 1;
  K.Info.Name = "touch";
  R3_TRY(W.send(wire::Type::Kernel, wire::encode(K)));
  wire::LaunchMsg L;
  L.KernelId = 2;
  return W.send(wire::Type::Launch, wire::encode(L));
}

/// RingFd: the bulk ring's descriptor, or -1 to send through the socket.
Error sendSnapshot(int Fd, int RingFd, FakeDevice &D, const Options &O) {
  wire::FrameWriter W(Fd, wire::SendMode::SocketNoSignal);
  R3_TRY(sendPreamble(W));
  std::unique_ptr<wire::RingWriter> Ring;
  if (RingFd >= 0) {
    auto R = wire::BulkRing::attach(RingFd, wire::DefaultRingGeometry);
    if (!R)
      return R.takeError();
    Ring = std::make_unique<wire::RingWriter>(std::move(*R), Fd, W);
  }
  std::vector<RegionInfo> Regions;
  for (uint8_t *B : D.Buffers)
    Regions.push_back({reinterpret_cast<uint64_t>(B), D.BufferBytes,
                       RegionKind::Device, "", false});
  cuda::SnapshotIo Io{hostCopy, hostAllocate, hostFree};
  // The ring's slots take copies directly, as pinned slots take DMA.
  cuda::Snapshot S(std::move(Regions), {&W, Ring.get(), Ring != nullptr}, Io);
  R3_TRY(S.sendPre(0));
  for (uint64_t B = 0; B < O.Changed && B < D.Buffers.size(); ++B)
    D.Buffers[B][D.BufferBytes / 2] ^= 1; // "the kernel" writes one byte
  R3_TRY(S.sendPost(0));
  return W.send(wire::Type::Done, wire::MetaWriter());
}

/// The ceilings' sender: the same bytes, as fast as write(2) takes them.
Error sendRaw(int Fd, const FakeDevice &D, const Options &O) {
  wire::FrameWriter W(Fd, wire::SendMode::SocketNoSignal);
  R3_TRY(W.begin(wire::Type::Region, wire::MetaWriter(), storedBytes(D, O)));
  for (uint64_t B = 0; B < D.Buffers.size(); ++B)
    R3_TRY(W.sendBulk(std::span(D.Buffers[B], D.BufferBytes)));
  for (uint64_t B = 0; B < O.Changed && B < D.Buffers.size(); ++B)
    R3_TRY(W.sendBulk(std::span(D.Buffers[B], D.BufferBytes)));
  return Error::success();
}

// ---- the parent: r3 record's side ------------------------------------------

enum class Case { MemoryFile, SocketOnly, PlainFile, CaptureSocket, Capture };

/// A plain file written as the capture writer writes: writeback started
/// every 64 MiB, fsync at the end.
class PlainFile {
public:
  explicit PlainFile(const std::string &Path)
      : Path(Path),
        Fd(::open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)) {}
  Error write(std::span<const uint8_t> B) {
    if (Fd < 0 || ::write(Fd, B.data(), B.size()) != ssize_t(B.size()))
      return errnoError(Path);
    if ((Unflushed += B.size()) >= (64ull << 20)) {
      Unflushed = 0;
      ::sync_file_range(Fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    }
    return Error::success();
  }
  Error close() {
    int Rc = ::fsync(Fd);
    ::close(Fd);
    return Rc == 0 ? Error::success() : errnoError(Path + ": fsync");
  }

private:
  std::string Path;
  int Fd;
  uint64_t Unflushed = 0;
};

/// The disk's ceiling: the same bytes from memory into the file, 4 MiB at a
/// time (the capture's chunk).
Error writeFromMemory(const FakeDevice &D, const Options &O,
                      const std::string &Path) {
  PlainFile F(Path);
  auto All = [&](uint8_t *B) -> Error {
    for (uint64_t Off = 0; Off < D.BufferBytes; Off += 4ull << 20)
      R3_TRY(F.write(std::span(
          B + Off, std::min<uint64_t>(4ull << 20, D.BufferBytes - Off))));
    return Error::success();
  };
  for (uint8_t *B : D.Buffers)
    R3_TRY(All(B));
  for (uint64_t B = 0; B < O.Changed && B < D.Buffers.size(); ++B)
    R3_TRY(All(D.Buffers[B]));
  return F.close();
}

Error receiveRaw(int Fd, const std::string &Path, Case C) {
  wire::FrameHeader H;
  bool AtEnd = false;
  R3_TRY(wire::readHeader(Fd, H, AtEnd));
  std::optional<PlainFile> Out;
  if (C == Case::PlainFile)
    Out.emplace(Path);
  std::vector<uint8_t> Buf(4ull << 20);
  for (uint64_t Left = H.BulkLength; Left > 0;) {
    std::span<uint8_t> Part(Buf.data(), std::min<uint64_t>(Buf.size(), Left));
    R3_TRY(wire::readExactly(Fd, Part));
    if (Out)
      R3_TRY(Out->write(Part));
    Left -= Part.size();
  }
  return Out ? Out->close() : Error::success();
}

Error receive(int Fd, const std::string &Path, Case C,
              const wire::BulkRing *Ring) {
  if (C != Case::Capture && C != Case::CaptureSocket)
    return receiveRaw(Fd, Path, C);
  CaptureHeader Base;
  return receiveCapture(Fd, Path, Base, CaptureCompression::None, Ring)
      .takeError();
}

int childMain(int Fd, int RingFd, FakeDevice &D, const Options &O, Case C) {
  bool Snap = C == Case::Capture || C == Case::CaptureSocket;
  Error E = Snap ? sendSnapshot(Fd, RingFd, D, O) : sendRaw(Fd, D, O);
  if (E) {
    std::fprintf(stderr, "r3-bench-record-stream: sender: %s\n",
                 E.message().c_str());
    return 1;
  }
  return 0;
}

double cpuSeconds(int Who) {
  rusage U;
  ::getrusage(Who, &U);
  auto S = [](const timeval &T) { return T.tv_sec + T.tv_usec * 1e-6; };
  return S(U.ru_utime) + S(U.ru_stime);
}

struct Timing {
  double Wall = 0, ParentCpu = 0, ChildCpu = 0;
};

Expected<Timing> runCase(FakeDevice &D, const Options &O, Case C) {
  int Fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, Fds) != 0)
    return errnoError("socketpair");
  for (int I = 0; I < 2; ++I) // as r3 record does
    wire::enlargeSocketBuffers(Fds[I]);
  bool Snap = C == Case::Capture || C == Case::CaptureSocket;
  std::string Path = O.Dir + "/r3-bench-stream-" + std::to_string(::getpid()) +
                     (Snap ? ".h5" : ".raw");
  Timing T{0, cpuSeconds(RUSAGE_SELF), cpuSeconds(RUSAGE_CHILDREN)};
  auto Start = std::chrono::steady_clock::now();
  if (C == Case::MemoryFile) {
    ::close(Fds[0]);
    ::close(Fds[1]);
    Error E = writeFromMemory(D, O, Path);
    T.Wall = seconds(Start);
    T.ParentCpu = cpuSeconds(RUSAGE_SELF) - T.ParentCpu;
    T.ChildCpu = 0;
    std::remove(Path.c_str());
    if (E)
      return E;
    return T;
  }
  wire::BulkRing Ring;
  if (C == Case::Capture) {
    auto R = wire::BulkRing::create(wire::DefaultRingGeometry);
    if (!R)
      return R.takeError();
    Ring = std::move(*R);
  }
  pid_t Pid = ::fork();
  if (Pid == 0) {
    ::close(Fds[0]);
    ::_exit(childMain(Fds[1], Ring ? ::dup(Ring.fd()) : -1, D, O, C));
  }
  ::close(Fds[1]);
  Ring.closeFd();
  Error E = receive(Fds[0], Path, C, Ring ? &Ring : nullptr);
  ::close(Fds[0]);
  int Status = 0;
  ::waitpid(Pid, &Status, 0);
  T.Wall = seconds(Start);
  T.ParentCpu = cpuSeconds(RUSAGE_SELF) - T.ParentCpu;
  T.ChildCpu = cpuSeconds(RUSAGE_CHILDREN) - T.ChildCpu;
  std::remove(Path.c_str());
  if (E)
    return E;
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
    return Error::make("the sending child failed");
  return T;
}

bool parse(int Argc, char **Argv, Options &O) {
  for (int I = 1; I + 1 < Argc; I += 2) {
    std::string A = Argv[I], V = Argv[I + 1];
    if (A == "--gib")
      O.Gib = std::atof(V.c_str());
    else if (A == "--buffer-mib")
      O.BufferMib = std::strtoull(V.c_str(), nullptr, 10);
    else if (A == "--changed")
      O.Changed = std::strtoull(V.c_str(), nullptr, 10);
    else if (A == "--dir")
      O.Dir = V;
    else
      return false;
  }
  return Argc % 2 == 1 && O.BufferMib > 0 &&
         O.Gib * 1024 >= double(O.BufferMib);
}
} // namespace

int main(int Argc, char **Argv) {
  Options O;
  if (!parse(Argc, Argv, O)) {
    std::fprintf(stderr, "usage: r3-bench-record-stream [--gib N] "
                         "[--buffer-mib M] [--changed K] [--dir DIR]\n");
    return 2;
  }
  FakeDevice D = makeDevice(O);
  double Gb = storedBytes(D, O) / 1e9;
  struct {
    const char *Name;
    Case C;
  } Cases[] = {{"memory -> write(2) + fsync", Case::MemoryFile},
               {"socket only (discarded)", Case::SocketOnly},
               {"socket -> write(2) + fsync", Case::PlainFile},
               {"snapshot -> socket -> capture", Case::CaptureSocket},
               {"snapshot -> ring -> capture", Case::Capture}};
  std::printf("%zu buffers of %llu MiB, %llu changed: %.2f GB stored\n\n",
              D.Buffers.size(), static_cast<unsigned long long>(O.BufferMib),
              static_cast<unsigned long long>(O.Changed), Gb);
  std::printf("%-32s %9s %9s %9s %9s %9s\n", "case", "seconds", "GB/s",
              "vs disk", "r3 cpu s", "app cpu s");
  double FileRate = 0;
  for (const auto &[Name, C] : Cases) {
    auto S = runCase(D, O, C);
    if (!S) {
      std::printf("%-32s failed: %s\n", Name, S.error().message().c_str());
      continue;
    }
    double Rate = Gb / S->Wall;
    if (C == Case::MemoryFile)
      FileRate = Rate;
    std::printf("%-32s %9.3f %9.2f %9.2f %9.2f %9.2f\n", Name, S->Wall, Rate,
                FileRate > 0 ? Rate / FileRate : 0.0, S->ParentCpu,
                S->ChildCpu);
  }
  return 0;
}
