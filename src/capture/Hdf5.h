// The one wrapper of the HDF5 C API in r3: owned handles, typed attribute and
// dataset helpers, and HDF5's error stack turned into r3::Error text. Nothing
// outside src/capture/ includes hdf5.h.
#pragma once

#include "support/Error.h"

#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3::h5 {

/// An owned HDF5 identifier, closed with the close function of its kind.
class Handle {
public:
  using CloseFn = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t Id, CloseFn Close) : Id(Id), Close(Close) {}
  Handle(Handle &&O) noexcept : Id(O.Id), Close(O.Close) { O.Id = -1; }
  Handle &operator=(Handle &&O) noexcept;
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return Id; }
  bool valid() const { return Id >= 0; }
  void reset();

private:
  hid_t Id = -1;
  CloseFn Close = nullptr;
};

/// Turns off HDF5's printing of its error stack (library code never prints).
void silenceErrors();

/// An error for a failed HDF5 call: "What: <HDF5's most specific message>",
/// with checksum and truncation failures named plainly.
Error lastError(const std::string &What);

// Files, groups, objects.
Expected<Handle> createFile(const std::string &Path);
Expected<Handle> openFile(const std::string &Path);
Expected<Handle> createGroup(hid_t Loc, const std::string &Name);
Expected<Handle> openGroup(hid_t Loc, const std::string &Name);
Expected<Handle> openDataset(hid_t Loc, const std::string &Name);
bool exists(hid_t Loc, const std::string &Name);
/// Whether Obj has the attribute Name; an error where Obj's header is
/// damaged (its attribute messages are checked before HDF5 decodes them:
/// capture/ObjectHeader.h).
Expected<bool> hasAttribute(hid_t Obj, const std::string &Name);

// Attributes (scalars, strings, small arrays).
Error writeAttr(hid_t Obj, const std::string &Name, uint64_t Value);
Error writeAttr(hid_t Obj, const std::string &Name, int64_t Value);
Error writeAttr(hid_t Obj, const std::string &Name, const std::string &Value);
Error writeAttr(hid_t Obj, const std::string &Name,
                std::span<const uint32_t> Values);
Expected<uint64_t> readUnsignedAttr(hid_t Obj, const std::string &Name);
Expected<int64_t> readSignedAttr(hid_t Obj, const std::string &Name);
Expected<std::string> readStringAttr(hid_t Obj, const std::string &Name);
Expected<std::vector<uint32_t>> readU32ArrayAttr(hid_t Obj,
                                                 const std::string &Name);

// Small whole datasets.
Error writeU64Dataset(hid_t Loc, const std::string &Name,
                      std::span<const uint64_t> V);
Expected<std::vector<uint64_t>> readU64Dataset(hid_t Loc,
                                               const std::string &Name);
Error writeStringDataset(hid_t Loc, const std::string &Name,
                         const std::vector<std::string> &V);
Expected<std::vector<std::string>> readStringDataset(hid_t Loc,
                                                     const std::string &Name);

/// A small, contiguous byte dataset (a parameter buffer).
Error writeSmallBytes(hid_t Loc, const std::string &Name,
                      std::span<const uint8_t> V);
Expected<std::vector<uint8_t>> readSmallBytes(hid_t Loc,
                                              const std::string &Name);

/// How a bulk byte dataset is stored.
enum class Compression { None, Deflate };

/// The chunk size used for a dataset of Size bytes: 4 MiB, or Size if smaller.
uint64_t chunkBytesFor(uint64_t Size);
/// A chunked (chunkBytesFor), Fletcher32-checksummed 1-D byte dataset.
Expected<Handle> createByteDataset(hid_t Loc, const std::string &Name,
                                   uint64_t Size, Compression C);
/// Writes one whole, already filtered chunk of a chunked dataset at Offset (a
/// multiple of its chunk size): Stored is what HDF5 would have written after
/// every filter (for an uncompressed byte dataset: the chunk, padded with
/// zeros past the dataset's end, then its Fletcher-32).
Error writeRawChunk(hid_t Dataset, uint64_t Offset,
                    std::span<const uint8_t> Stored);
/// Writes Bytes at Offset of a byte dataset.
Error writeBytes(hid_t Dataset, uint64_t Offset,
                 std::span<const uint8_t> Bytes);
/// Reads Out.size() bytes at Offset of a byte dataset.
Error readBytes(hid_t Dataset, uint64_t Offset, std::span<uint8_t> Out);
/// Checks that a one-dimensional dataset of Elements elements has every
/// element stored: each chunk of a chunked one, with a size its filters
/// allow (HDF5 reads a chunk never written as zeros, so a damaged size
/// could otherwise claim gigabytes that a small file does not hold, and it
/// trusts a chunk's stored size: tests/fuzz/README.md).
Error checkStored(hid_t Dataset, uint64_t Elements);
/// The number of bytes of a 1-D byte dataset; an error for any other shape.
Expected<uint64_t> byteDatasetSize(hid_t Dataset);

} // namespace r3::h5
