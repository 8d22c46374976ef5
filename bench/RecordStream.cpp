// Benchmark (not a test): the host half of recording one CUDA launch, which is
// what decides snapshot throughput once the device-to-host copy (tens of GB/s
// into pinned memory) is out of the way. A forked child plays the injected
// library: the real Snapshot code, with "device" buffers in host memory and
// memcpy standing in for cuMemcpy, sends the pre-state of every buffer and the
// post-state of the changed ones over the same kind of socketpair `r3 record`
// uses; the parent runs the real receiveCapture, writing HDF5 to DIR. Beside
// it, in the same run, the ceilings of this machine: the socket alone (the
// parent discards), and the socket into write(2) + fsync of a plain file.
//
//   r3-bench-record-stream [--gib N] [--buffer-mib M] [--changed K] [--dir D]
//
// Defaults imitate bench/cuda-record's snapshot_app: 1 GiB in 256 MiB buffers,
// one changed (1.34 GB stored). Prints one row per case, GB stored over the
// whole transfer (the capture's fsync included), and the ratio to the plain
// file's rate.
#include "record/CaptureSink.h"
#include "record/Messages.h"
#include "record/Protocol.h"
#include "record/cuda/Snapshot.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
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

Error sendSnapshot(int Fd, FakeDevice &D, const Options &O) {
  wire::FrameWriter W(Fd, wire::SendMode::SocketNoSignal);
  R3_TRY(sendPreamble(W));
  std::vector<RegionInfo> Regions;
  for (uint8_t *B : D.Buffers)
    Regions.push_back({reinterpret_cast<uint64_t>(B), D.BufferBytes,
                       RegionKind::Device, "", false});
  cuda::SnapshotIo Io{hostCopy, hostAllocate, hostFree};
  cuda::Snapshot S(std::move(Regions), Io);
  R3_TRY(S.sendPre(W, 0));
  for (uint64_t B = 0; B < O.Changed && B < D.Buffers.size(); ++B)
    D.Buffers[B][D.BufferBytes / 2] ^= 1; // "the kernel" writes one byte
  R3_TRY(S.sendPost(W, 0));
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

enum class Case { SocketOnly, PlainFile, Capture };

Error receiveRaw(int Fd, const std::string &Path, Case C) {
  wire::FrameHeader H;
  bool AtEnd = false;
  R3_TRY(wire::readHeader(Fd, H, AtEnd));
  int Out = C == Case::PlainFile
                ? ::open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)
                : -1;
  std::vector<uint8_t> Buf(4ull << 20);
  for (uint64_t Left = H.BulkLength; Left > 0;) {
    std::span<uint8_t> Part(Buf.data(), std::min<uint64_t>(Buf.size(), Left));
    R3_TRY(wire::readExactly(Fd, Part));
    if (Out >= 0 && ::write(Out, Part.data(), Part.size()) < 0)
      return errnoError(Path);
    Left -= Part.size();
  }
  if (Out >= 0) {
    ::fsync(Out);
    ::close(Out);
  }
  return Error::success();
}

Error receive(int Fd, const std::string &Path, Case C) {
  if (C != Case::Capture)
    return receiveRaw(Fd, Path, C);
  CaptureHeader Base;
  return receiveCapture(Fd, Path, Base).takeError();
}

int childMain(int Fd, FakeDevice &D, const Options &O, Case C) {
  Error E = C == Case::Capture ? sendSnapshot(Fd, D, O) : sendRaw(Fd, D, O);
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
  std::string Path = O.Dir + "/r3-bench-stream-" + std::to_string(::getpid()) +
                     (C == Case::Capture ? ".h5" : ".raw");
  Timing T{0, cpuSeconds(RUSAGE_SELF), cpuSeconds(RUSAGE_CHILDREN)};
  auto Start = std::chrono::steady_clock::now();
  pid_t Pid = ::fork();
  if (Pid == 0) {
    ::close(Fds[0]);
    ::_exit(childMain(Fds[1], D, O, C));
  }
  ::close(Fds[1]);
  Error E = receive(Fds[0], Path, C);
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
  } Cases[] = {{"socket only (discarded)", Case::SocketOnly},
               {"socket -> write(2) + fsync", Case::PlainFile},
               {"snapshot -> r3 capture (HDF5)", Case::Capture}};
  std::printf("%zu buffers of %llu MiB, %llu changed: %.2f GB stored\n\n",
              D.Buffers.size(), static_cast<unsigned long long>(O.BufferMib),
              static_cast<unsigned long long>(O.Changed), Gb);
  std::printf("%-32s %9s %9s %9s %9s %9s\n", "case", "seconds", "GB/s",
              "vs file", "r3 cpu s", "app cpu s");
  double FileRate = 0;
  for (const auto &[Name, C] : Cases) {
    auto S = runCase(D, O, C);
    if (!S) {
      std::printf("%-32s failed: %s\n", Name, S.error().message().c_str());
      continue;
    }
    double Rate = Gb / S->Wall;
    if (C == Case::PlainFile)
      FileRate = Rate;
    std::printf("%-32s %9.3f %9.2f %9.2f %9.2f %9.2f\n", Name, S->Wall, Rate,
                FileRate > 0 ? Rate / FileRate : 0.0, S->ParentCpu,
                S->ChildCpu);
  }
  return 0;
}
