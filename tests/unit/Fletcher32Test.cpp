// The capture writer checksums chunks itself (Fletcher32.h) and writes them
// past HDF5's filter pipeline: each stored chunk must be exactly what the
// pipeline stores for the same bytes, checksum and edge-chunk padding
// included, or other HDF5 readers would call the capture corrupt.
#include "Catch.h"

#include "capture/Fletcher32.h"
#include "capture/Hdf5.h"

#include <cstdio>
#include <filesystem>
#include <random>
#include <unistd.h>

using namespace r3;

namespace {
std::string tempPath(const std::string &Name) {
  return (std::filesystem::temp_directory_path() /
          ("r3-unit-" + std::to_string(::getpid()) + "-" + Name))
      .string();
}

std::vector<uint8_t> pattern(size_t N, int Kind) {
  std::mt19937 G(N);
  std::vector<uint8_t> B(N);
  for (uint8_t &V : B)
    V = Kind == 0 ? 0 : Kind == 1 ? 0xff : Kind == 2 ? uint8_t(G()) : 1;
  return B;
}

/// The stored chunks of a dataset, raw (data and checksum).
std::vector<std::vector<uint8_t>> rawChunks(hid_t D, uint64_t Size) {
  std::vector<std::vector<uint8_t>> Out;
  uint64_t Chunk = h5::chunkBytesFor(Size);
  for (hsize_t Off = 0; Off < Size; Off += Chunk) {
    hsize_t Stored = 0;
    REQUIRE(H5Dget_chunk_storage_size(D, &Off, &Stored) >= 0);
    std::vector<uint8_t> B(Stored);
    uint32_t Filters = 0;
    REQUIRE(H5Dread_chunk(D, H5P_DEFAULT, &Off, &Filters, B.data()) >= 0);
    CHECK(Filters == 0);
    Out.push_back(std::move(B));
  }
  return Out;
}

/// What the pipeline stores for Bytes, then what writeRawChunk stores.
std::pair<std::vector<std::vector<uint8_t>>, std::vector<std::vector<uint8_t>>>
storeBothWays(const std::vector<uint8_t> &Bytes) {
  std::string Path = tempPath("fletcher.h5");
  auto F = h5::createFile(Path);
  REQUIRE(F);
  uint64_t Size = Bytes.size(), Chunk = h5::chunkBytesFor(Size);
  auto Piped =
      h5::createByteDataset(F->get(), "piped", Size, h5::Compression::None);
  auto Raw =
      h5::createByteDataset(F->get(), "raw", Size, h5::Compression::None);
  REQUIRE(Piped);
  REQUIRE(Raw);
  REQUIRE_FALSE(h5::writeBytes(Piped->get(), 0, Bytes));
  for (uint64_t Off = 0; Off < Size; Off += Chunk) {
    std::vector<uint8_t> Stored(Chunk + 4, 0);
    std::copy(Bytes.begin() + Off, Bytes.begin() + std::min(Size, Off + Chunk),
              Stored.begin());
    storeFletcher32(fletcher32(std::span(Stored.data(), Chunk)),
                    Stored.data() + Chunk);
    REQUIRE_FALSE(h5::writeRawChunk(Raw->get(), Off, Stored));
  }
  auto Result =
      std::pair(rawChunks(Piped->get(), Size), rawChunks(Raw->get(), Size));
  std::vector<uint8_t> Back(Size);
  REQUIRE_FALSE(h5::readBytes(Raw->get(), 0, Back)); // checksums verified
  CHECK(Back == Bytes);
  std::remove(Path.c_str());
  return Result;
}
} // namespace

TEST_CASE("fletcher32 stores the chunks HDF5's filter stores", "[capture]") {
  // Sizes around the 16-word rows and 360-row blocks, odd sizes, and more
  // than one chunk with a partial edge chunk; all-0xff data sums to a
  // multiple of 65535, which HDF5 keeps as 0xffff, not 0.
  for (size_t N :
       {1, 2, 3, 31, 32, 33, 11519, 11520, 11521, 100001, (4 << 20) + 4097})
    for (int Kind = 0; Kind < 4; ++Kind) {
      INFO("size " << N << ", pattern " << Kind);
      auto [Piped, Raw] = storeBothWays(pattern(N, Kind));
      CHECK(Piped == Raw);
    }
}

TEST_CASE("a stored chunk with a wrong checksum reads as corrupt",
          "[capture]") {
  std::string Path = tempPath("fletcher-bad.h5");
  auto F = h5::createFile(Path);
  REQUIRE(F);
  auto D = h5::createByteDataset(F->get(), "d", 1000, h5::Compression::None);
  REQUIRE(D);
  std::vector<uint8_t> Stored(1004, 5);
  storeFletcher32(fletcher32(std::span(Stored.data(), 1000)) ^ 1,
                  Stored.data() + 1000);
  REQUIRE_FALSE(h5::writeRawChunk(D->get(), 0, Stored));
  std::vector<uint8_t> Back(1000);
  Error E = h5::readBytes(D->get(), 0, Back);
  REQUIRE(E);
  CHECK(E.message() == "checksum mismatch (the stored data is corrupt)");
  std::remove(Path.c_str());
}
