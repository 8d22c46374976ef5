// Damaged captures for the bad-input tests: each kind breaks one thing a reader
// must notice and report precisely.
#include "SyntheticCapture.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace r3::testing {

namespace {
Error die(const std::string &Msg) { return Error::make(Msg); }

std::vector<char> slurp(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return {std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>()};
}

void spill(const std::string &Path, const std::vector<char> &Bytes, size_t N) {
  std::ofstream(Path, std::ios::binary | std::ios::trunc)
      .write(Bytes.data(), N);
}

/// Applies an HDF5-level edit to a good capture.
Error edit(const std::string &Path, const std::string &Kind) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t F = H5Fopen(Path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (F < 0)
    return die("cannot reopen " + Path);
  herr_t Rc = 0;
  if (Kind == "future-version") {
    hid_t A = H5Aopen(F, "format_version", H5P_DEFAULT);
    uint64_t V = 2;
    Rc = H5Awrite(A, H5T_NATIVE_UINT64, &V);
    H5Aclose(A);
  } else if (Kind == "incomplete") {
    Rc = H5Adelete(F, "complete");
  } else if (Kind == "missing-dataset") {
    Rc = H5Ldelete(F, "/launches/1/pre/region_1", H5P_DEFAULT);
  } else if (Kind == "zero-length") {
    Rc = H5Ldelete(F, "/launches/0/pre/region_2", H5P_DEFAULT);
    hsize_t Zero = 0;
    hid_t S = H5Screate_simple(1, &Zero, nullptr);
    hid_t D = H5Dcreate2(F, "/launches/0/pre/region_2", H5T_NATIVE_UINT8, S,
                         H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    Rc = Rc < 0 || D < 0 ? -1 : 0;
    H5Dclose(D);
    H5Sclose(S);
  }
  H5Fclose(F);
  return Rc < 0 ? die("edit " + Kind + " failed") : Error::success();
}

/// Flips one byte inside the stored bytes of /launches/0/pre/region_0.
Error flipByte(const std::string &Path) {
  std::vector<char> Bytes = slurp(Path);
  std::vector<char> Needle(64);
  for (size_t I = 0; I < Needle.size(); ++I)
    Needle[I] = static_cast<char>(
        syntheticByte(regionSeed(0, 0, Phase::Pre), 1000 + I));
  auto It =
      std::search(Bytes.begin(), Bytes.end(), Needle.begin(), Needle.end());
  if (It == Bytes.end())
    return die("region bytes not found in " + Path);
  *It ^= 0x01;
  spill(Path, Bytes, Bytes.size());
  return Error::success();
}

/// Makes the first object of the global heap collection that holds the
/// command line claim 2 GiB: HDF5 1.10 copies past its buffer reading it
/// (tests/fuzz/README.md), so r3 must refuse the file first.
Error damageHeap(const std::string &Path) {
  hid_t F = H5Fopen(Path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t D = H5Dopen2(F, "/application/command_line", H5P_DEFAULT);
  haddr_t Elements = D < 0 ? HADDR_UNDEF : H5Dget_offset(D);
  H5Dclose(D);
  H5Fclose(F);
  std::vector<char> Bytes = slurp(Path);
  uint64_t Heap = 0, Claim = 0x7ffffff0;
  if (Elements == HADDR_UNDEF || Elements + 12 > Bytes.size())
    return die("no command line elements in " + Path);
  std::memcpy(&Heap, &Bytes[Elements + 4], 8);
  if (Heap > Bytes.size() || Bytes.size() - Heap < 32 ||
      std::memcmp(&Bytes[Heap], "GCOL", 4) != 0)
    return die("no global heap collection in " + Path);
  std::memcpy(&Bytes[Heap + 16 + 8], &Claim, 8);
  spill(Path, Bytes, Bytes.size());
  return Error::success();
}

Error otherSchema(const std::string &Path) {
  hid_t F = H5Fcreate(Path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t N = 4;
  hid_t S = H5Screate_simple(1, &N, nullptr);
  hid_t D = H5Dcreate2(F, "temperature", H5T_NATIVE_DOUBLE, S, H5P_DEFAULT,
                       H5P_DEFAULT, H5P_DEFAULT);
  double V[4] = {1, 2, 3, 4};
  H5Dwrite(D, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, V);
  H5Dclose(D);
  H5Sclose(S);
  H5Fclose(F);
  return Error::success();
}
} // namespace

Error makeCaptureFixture(const std::string &Kind, const std::string &Path) {
  if (Kind == "other-schema")
    return otherSchema(Path);
  if (Kind == "not-hdf5") {
    std::ofstream(Path) << "this is a text file, not a capture\n";
    return Error::success();
  }
  SyntheticSpec Spec;
  if (Kind == "deflate")
    Spec.Compression = CaptureCompression::Deflate;
  if (Error E = writeSyntheticCapture(Path, Spec))
    return E;
  if (Kind == "good" || Kind == "deflate")
    return Error::success();
  if (Kind == "flipped-byte")
    return flipByte(Path);
  if (Kind == "damaged-heap")
    return damageHeap(Path);
  if (Kind == "truncated") {
    std::vector<char> Bytes = slurp(Path);
    spill(Path, Bytes, Bytes.size() / 2);
    return Error::success();
  }
  if (Kind == "future-version" || Kind == "incomplete" ||
      Kind == "missing-dataset" || Kind == "zero-length")
    return edit(Path, Kind);
  return die("unknown kind '" + Kind + "'");
}

} // namespace r3::testing
