// Benchmark (not a test): capture write and read throughput against the raw
// sequential speed of the same disk, measured in the same run. Prints a table:
//
//   r3-bench-capture-io [--gib N] [--dir DIR]
//
// The data imitates device memory: smooth float fields with noise, which
// deflate compresses a little, not a lot. Files are dropped from the page cache
// (posix_fadvise DONTNEED after fsync) before each read, so reads come from
// disk where the kernel honours the advice.
#include "capture/CaptureReader.h"
#include "capture/CaptureWriter.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace r3;

namespace {
constexpr uint64_t Block = 4ull << 20;
constexpr uint64_t RegionBytes = 512ull << 20;

double seconds(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
      .count();
}

/// One 4 MiB block of smooth floats with noise; chunks vary it by a cheap XOR.
std::vector<uint8_t> patternBlock() {
  std::vector<float> F(Block / sizeof(float));
  uint32_t Noise = 12345;
  for (size_t I = 0; I < F.size(); ++I) {
    Noise = Noise * 1664525u + 1013904223u;
    F[I] = std::sin(I * 1e-3f) * 100.0f + (Noise >> 8) * 1e-7f;
  }
  std::vector<uint8_t> B(Block);
  std::memcpy(B.data(), F.data(), Block);
  return B;
}

ByteSource patternSource(const std::vector<uint8_t> &Pattern) {
  return [&Pattern](uint64_t Offset, std::span<uint8_t> Out) {
    std::memcpy(Out.data(), Pattern.data(), Out.size());
    uint64_t Tag = Offset / Block;
    std::memcpy(Out.data(), &Tag, sizeof(Tag)); // chunks differ from each other
    return Error::success();
  };
}

void dropFromCache(const std::string &Path) {
  int Fd = ::open(Path.c_str(), O_RDONLY);
  if (Fd >= 0) {
    ::fdatasync(Fd);
    ::posix_fadvise(Fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(Fd);
  }
}

uint64_t fileSize(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 ? St.st_size : 0;
}

struct Row {
  std::string Case;
  double WriteMBs = 0, ReadMBs = 0;
  uint64_t FileBytes = 0;
};

Expected<Row> rawDisk(const std::string &Path, uint64_t Bytes,
                      const std::vector<uint8_t> &Pattern) {
  auto Start = std::chrono::steady_clock::now();
  int Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (Fd < 0)
    return errnoError(Path);
  for (uint64_t Done = 0; Done < Bytes; Done += Block)
    if (::write(Fd, Pattern.data(), Block) != static_cast<ssize_t>(Block))
      return errnoError(Path + ": write");
  ::fsync(Fd);
  ::close(Fd);
  Row R{"raw write(2)+fsync / read(2)", Bytes / 1e6 / seconds(Start), 0,
        fileSize(Path)};
  dropFromCache(Path);
  std::vector<uint8_t> Buf(Block);
  Start = std::chrono::steady_clock::now();
  Fd = ::open(Path.c_str(), O_RDONLY);
  while (::read(Fd, Buf.data(), Block) > 0) {
  }
  ::close(Fd);
  R.ReadMBs = Bytes / 1e6 / seconds(Start);
  std::remove(Path.c_str());
  return R;
}

Error writeCapture(const std::string &Path, uint64_t Bytes,
                   CaptureCompression C, const std::vector<uint8_t> &Pattern) {
  CaptureHeader H;
  H.Device.Name = "benchmark";
  auto W = CaptureWriter::create(Path, H, C);
  if (!W)
    return W.takeError();
  std::vector<uint8_t> Image(1024, 7);
  auto M = (*W)->addModule(ModuleKind::Cubin, Image);
  auto K = (*W)->addKernel(KernelInfo{});
  auto L = (*W)->beginLaunch(LaunchInfo{});
  if (!M || !K || !L)
    return Error::make("cannot start the benchmark capture");
  for (uint64_t Done = 0; Done < Bytes; Done += RegionBytes) {
    RegionInfo R;
    R.Base = 0x7f0000000000ull + Done;
    R.Size = std::min(RegionBytes, Bytes - Done);
    if (auto Added = (*W)->addRegion(*L, R, patternSource(Pattern)); !Added)
      return Added.takeError();
  }
  return (*W)->finish();
}

Expected<Row> captureCase(const std::string &Path, uint64_t Bytes,
                          CaptureCompression C,
                          const std::vector<uint8_t> &Pattern) {
  Row R{C == CaptureCompression::Deflate ? "capture, deflate"
                                         : "capture, no compression"};
  auto Start = std::chrono::steady_clock::now();
  R3_TRY(writeCapture(Path, Bytes, C, Pattern)); // finish() fsyncs
  R.WriteMBs = Bytes / 1e6 / seconds(Start);
  R.FileBytes = fileSize(Path);
  dropFromCache(Path);
  Start = std::chrono::steady_clock::now();
  auto Reader = CaptureReader::open(Path);
  if (!Reader)
    return Reader.takeError();
  uint64_t Read = 0;
  auto Count = [&](uint64_t, std::span<const uint8_t> B) {
    Read += B.size();
    return Error::success();
  };
  for (uint32_t Reg = 0; Reg < (*Reader)->launches()[0].Regions.size(); ++Reg)
    R3_TRY((*Reader)->streamRegion(0, Reg, Phase::Pre, Count));
  R.ReadMBs = Read / 1e6 / seconds(Start);
  std::remove(Path.c_str());
  return R;
}

void printTable(const std::vector<Row> &Rows, uint64_t Bytes) {
  const Row &Raw = Rows.front();
  std::printf("%-32s %6s %12s %12s %11s %11s %12s\n", "case", "GiB",
              "write MB/s", "read MB/s", "write/raw", "read/raw", "file MiB");
  for (const Row &R : Rows)
    std::printf("%-32s %6.2f %12.0f %12.0f %11.2f %11.2f %12.0f\n",
                R.Case.c_str(), Bytes / double(1ull << 30), R.WriteMBs,
                R.ReadMBs, R.WriteMBs / Raw.WriteMBs, R.ReadMBs / Raw.ReadMBs,
                R.FileBytes / double(1 << 20));
}
} // namespace

int main(int Argc, char **Argv) {
  double Gib = 2;
  std::string Dir = ".";
  for (int I = 1; I + 1 < Argc; I += 2) {
    if (std::string(Argv[I]) == "--gib")
      Gib = std::atof(Argv[I + 1]);
    else if (std::string(Argv[I]) == "--dir")
      Dir = Argv[I + 1];
  }
  if (Gib <= 0 || Argc % 2 == 0) {
    std::fprintf(stderr, "usage: r3-bench-capture-io [--gib N] [--dir DIR]\n");
    return 2;
  }
  uint64_t Bytes = static_cast<uint64_t>(Gib * (1ull << 30)) / Block * Block;
  std::vector<uint8_t> Pattern = patternBlock();
  std::string Base = Dir + "/r3-bench-" + std::to_string(::getpid());
  std::vector<Row> Rows;
  auto Raw = rawDisk(Base + ".raw", Bytes, Pattern);
  auto Plain =
      captureCase(Base + ".h5", Bytes, CaptureCompression::None, Pattern);
  auto Deflate =
      captureCase(Base + ".z.h5", Bytes, CaptureCompression::Deflate, Pattern);
  for (auto *R : {&Raw, &Plain, &Deflate}) {
    if (!*R) {
      std::fprintf(stderr, "r3-bench-capture-io: %s\n",
                   R->error().message().c_str());
      return 1;
    }
    Rows.push_back(**R);
  }
  printTable(Rows, Bytes);
  std::printf(
      "\nreads follow posix_fadvise(DONTNEED); a file system that ignores it "
      "serves them from the page cache\n");
  return 0;
}
