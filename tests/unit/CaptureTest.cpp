// The capture format: byte-exact round trips (up to a 256 MiB region) and the
// precise errors for every kind of bad input.
#include "Catch.h"

#include "SyntheticCapture.h"
#include "capture/CaptureReader.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace r3;
using namespace r3::testing;

namespace {
std::string tempPath(const std::string &Name) {
  return (std::filesystem::temp_directory_path() /
          ("r3-unit-" + std::to_string(::getpid()) + "-" + Name))
      .string();
}

/// Streams a region and counts the bytes that differ from the synthetic
/// pattern.
uint64_t mismatches(const CaptureReader &R, uint32_t L, uint32_t Reg, Phase P,
                    uint64_t Seed) {
  uint64_t Bad = 0;
  Error E =
      R.streamRegion(L, Reg, P, [&](uint64_t Off, std::span<const uint8_t> B) {
        for (size_t I = 0; I < B.size(); ++I)
          Bad += B[I] != syntheticByte(Seed, Off + I);
        return Error::success();
      });
  REQUIRE_FALSE(E);
  return Bad;
}

void checkContents(const CaptureReader &R, const SyntheticSpec &S) {
  for (uint32_t L = 0; L < R.launches().size(); ++L)
    for (uint32_t Reg = 0; Reg < S.RegionsPerLaunch; ++Reg) {
      bool Changed = Reg % 2 == 1;
      CHECK(R.launches()[L].Regions[Reg].Changed == Changed);
      CHECK(mismatches(R, L, Reg, Phase::Pre, regionSeed(L, Reg, Phase::Pre)) ==
            0);
      uint64_t PostSeed =
          regionSeed(L, Reg, Changed ? Phase::Post : Phase::Pre);
      CHECK(mismatches(R, L, Reg, Phase::Post, PostSeed) == 0);
    }
}

std::string openError(const std::string &Kind) {
  std::string Path = tempPath(Kind + ".h5");
  REQUIRE_FALSE(makeCaptureFixture(Kind, Path));
  auto R = CaptureReader::open(Path);
  std::string Msg;
  if (!R)
    Msg = R.error().message();
  else if (auto Bytes = (*R)->verifyData(); !Bytes)
    Msg = Bytes.error().message();
  std::remove(Path.c_str());
  REQUIRE(Msg.rfind(Path + ": ", 0) == 0); // every message names the file first
  return Msg.substr(Path.size() + 2);
}
} // namespace

TEST_CASE("a synthetic capture round-trips its metadata", "[capture]") {
  std::string Path = tempPath("meta.h5");
  SyntheticSpec S;
  S.Kernels = 3;
  REQUIRE_FALSE(writeSyntheticCapture(Path, S));
  auto R = CaptureReader::open(Path);
  REQUIRE(R);
  const CaptureReader &C = **R;
  CHECK(C.formatVersion() == CaptureFormatVersion);
  CHECK(C.header().Source == Backend::Cuda);
  CHECK(C.header().Producer.rfind("r3 ", 0) == 0);
  CHECK(C.header().Device.Name == "Synthetic GPU");
  CHECK(C.header().Device.ComputeMajor == 9);
  CHECK(C.header().Device.Ordinal == -1); // the fixture does not say
  CHECK(C.header().CommandLine ==
        std::vector<std::string>{"./app", "--steps", "10"});
  REQUIRE(C.kernels().size() == 3);
  CHECK(C.kernels()[1].Name == "_Z7kernel1Pfi");
  CHECK(C.kernels()[1].Params.size() == 2);
  CHECK(C.kernels()[1].Params[1].Offset == 8);
  CHECK(C.kernels()[1].Globals[0].Name == "coeffs");
  CHECK(C.kernels()[1].AppDurationsNs ==
        std::vector<uint64_t>{11000, 12000, 13000});
  REQUIRE(C.launches().size() == 6);
  const LaunchInfo &L = C.launches()[3];
  CHECK(L.Kernel == 1);
  CHECK(L.Ordinal == 1);
  CHECK(L.Grid == Dim3{64, 2, 1});
  CHECK(L.Block == Dim3{128, 1, 1});
  CHECK(L.DurationNs == std::optional<uint64_t>(12100));
  CHECK(L.Params == std::vector<uint8_t>(16, 0xAB));
  REQUIRE(L.Regions.size() == 3);
  CHECK(L.Regions[2].Kind == RegionKind::Global);
  CHECK(L.Regions[2].Name == "coeffs");
  CHECK(L.Regions[1].Base == 0x7f0000100000ull + (1ull << 32));
  auto Image = C.readModule(0);
  REQUIRE(Image);
  REQUIRE(Image->size() == 3000);
  CHECK((*Image)[17] == syntheticByte(99, 17));
  checkContents(C, S);
  std::remove(Path.c_str());
}

TEST_CASE("a 256 MiB region round-trips byte-exact", "[capture][large]") {
  std::string Path = tempPath("large.h5");
  SyntheticSpec S;
  S.Kernels = 1;
  S.LaunchesPerKernel = 2;
  S.RegionBytes = (256ull << 20) + 12345; // not a whole number of chunks
  REQUIRE_FALSE(writeSyntheticCapture(Path, S));
  auto R = CaptureReader::open(Path);
  REQUIRE(R);
  CHECK((*R)->launches()[0].Regions[0].Size == S.RegionBytes);
  CHECK(mismatches(**R, 0, 0, Phase::Pre, regionSeed(0, 0, Phase::Pre)) == 0);
  std::vector<uint8_t> Tail(100);
  REQUIRE_FALSE((*R)->readRegion(1, 0, Phase::Pre, S.RegionBytes - 100, Tail));
  CHECK(Tail[99] ==
        syntheticByte(regionSeed(1, 0, Phase::Pre), S.RegionBytes - 1));
  std::remove(Path.c_str());
}

TEST_CASE("deflate-compressed captures read back the same bytes", "[capture]") {
  std::string Path = tempPath("deflate.h5");
  SyntheticSpec S;
  S.Compression = CaptureCompression::Deflate;
  REQUIRE_FALSE(writeSyntheticCapture(Path, S));
  auto R = CaptureReader::open(Path);
  REQUIRE(R);
  checkContents(**R, S);
  std::remove(Path.c_str());
}

TEST_CASE("an unfinished writer leaves no file at the final path",
          "[capture]") {
  std::string Path = tempPath("unfinished.h5");
  {
    auto W = CaptureWriter::create(Path, CaptureHeader{});
    REQUIRE(W);
    REQUIRE((*W)->addModule(ModuleKind::Bitcode, std::vector<uint8_t>(10, 1)));
    // destroyed without finish(), as if the recording had failed
  }
  CHECK_FALSE(std::filesystem::exists(Path));
  CHECK_FALSE(
      std::filesystem::exists(Path + ".tmp." + std::to_string(::getpid())));
}

TEST_CASE("the writer refuses zero-length regions and unknown indices",
          "[capture]") {
  std::string Path = tempPath("refuse.h5");
  auto W = CaptureWriter::create(Path, CaptureHeader{});
  REQUIRE(W);
  KernelInfo K;
  K.Module = 4;
  auto Bad = (*W)->addKernel(K);
  REQUIRE_FALSE(Bad);
  CHECK(Bad.error().message().find("module 4 was not added") !=
        std::string::npos);
  REQUIRE((*W)->addModule(ModuleKind::Cubin, std::vector<uint8_t>(8, 0)));
  K.Module = 0;
  REQUIRE((*W)->addKernel(K));
  auto L = (*W)->beginLaunch(LaunchInfo{});
  REQUIRE(L);
  auto Zero = (*W)->addRegion(*L, RegionInfo{}, bytesFrom({}));
  REQUIRE_FALSE(Zero);
  CHECK(Zero.error().message() ==
        "/launches/0/pre/region_0: zero-length region");
}

TEST_CASE("a source that fails midway ends the region with its error",
          "[capture]") {
  // Many chunks: the source is read on the writer's second thread, ahead of
  // the writes; its failure must still come back, after the chunks before it.
  for (uint64_t FailAt : {0ull, 4ull << 20, 12ull << 20}) {
    DYNAMIC_SECTION("failing at byte " << FailAt) {
      std::string Path = tempPath("midway.h5");
      auto W = CaptureWriter::create(Path, CaptureHeader{});
      REQUIRE(W);
      REQUIRE((*W)->addModule(ModuleKind::Cubin, std::vector<uint8_t>(8, 0)));
      REQUIRE((*W)->addKernel(KernelInfo{}));
      auto L = (*W)->beginLaunch(LaunchInfo{});
      REQUIRE(L);
      uint64_t Reads = 0;
      ByteSource Src = [&](uint64_t Offset, std::span<uint8_t> Out) -> Error {
        ++Reads;
        if (Offset >= FailAt)
          return Error::make("the stream broke");
        std::memset(Out.data(), 7, Out.size());
        return Error::success();
      };
      RegionInfo R{0x1000, 16ull << 20, RegionKind::Device, "", false};
      auto Added = (*W)->addRegion(*L, R, Src);
      REQUIRE_FALSE(Added);
      CHECK(Added.error().message() ==
            "/launches/0/pre/region_0: the stream broke");
      CHECK(Reads == FailAt / (4ull << 20) + 1); // nothing read after it
    }
  }
}

TEST_CASE("bad inputs get precise errors", "[capture]") {
  CHECK(openError("not-hdf5") == "not an HDF5 file");
  CHECK(openError("other-schema").find("not an r3 capture") == 0);
  CHECK(openError("future-version").find("capture format version 2 is newer") ==
        0);
  CHECK(openError("incomplete").find("incomplete capture") == 0);
  CHECK(openError("missing-dataset") ==
        "/launches/1/pre/region_1: missing dataset");
  CHECK(openError("zero-length") ==
        "/launches/0/pre/region_2: zero-length region");
  CHECK(openError("flipped-byte")
            .find("/launches/0/pre/region_0: checksum mismatch") == 0);
  CHECK(openError("truncated").find("truncated file") != std::string::npos);
}

TEST_CASE("a missing file is named", "[capture]") {
  auto R = CaptureReader::open("/nonexistent/cap.h5");
  REQUIRE_FALSE(R);
  CHECK(R.error().message() == "/nonexistent/cap.h5: no such file");
}
