// Superblock checks before HDF5 opens a capture (Superblock.h). The layouts
// are those of the HDF5 file format specification, section II.A: version 0
// and 1 superblocks (what HDF5 1.10 writes by default) and versions 2 and 3.
#include "capture/Superblock.h"

#include "support/Bytes.h"

#include <cstring>
#include <fstream>

namespace r3 {

namespace {
constexpr uint8_t Signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/// Where each field of interest lies in a superblock of a version.
struct Layout {
  size_t OffsetSizeAt, LengthSizeAt, BaseAt, EofAt, RootAt, Bytes;
};

Layout layoutOf(uint8_t Version) {
  switch (Version) {
  case 0: // root: the object header address of the root's symbol table entry
    return {13, 14, 24, 40, 64, 72};
  case 1: // as 0, with 4 more bytes (indexed storage K) before the base
    return {13, 14, 28, 44, 68, 76};
  default: // 2 and 3
    return {9, 10, 12, 28, 36, 48};
  }
}
} // namespace

Error checkSuperblock(std::span<const uint8_t> Head, uint64_t FileSize) {
  if (Head.size() < 48 || std::memcmp(Head.data(), Signature, 8) != 0)
    return Error::make("not an HDF5 file");
  uint8_t Version = Head[8];
  if (Version > 3)
    return makeError("HDF5 superblock version ", unsigned(Version),
                     " is not one HDF5 writes (0 to 3)");
  Layout L = layoutOf(Version);
  if (Head.size() < L.Bytes)
    return makeError("truncated file: ", FileSize,
                     " bytes hold no whole HDF5 superblock");
  if (Head[L.OffsetSizeAt] != 8 || Head[L.LengthSizeAt] != 8)
    return makeError("expected 8-byte HDF5 addresses and lengths, got ",
                     unsigned(Head[L.OffsetSizeAt]), " and ",
                     unsigned(Head[L.LengthSizeAt]));
  if (uint64_t Base = littleEndian(Head, L.BaseAt, 8); Base != 0)
    return makeError("expected the HDF5 superblock at the start of the file, "
                     "got base address ",
                     Base);
  uint64_t Eof = littleEndian(Head, L.EofAt, 8);
  if (Eof > FileSize)
    return makeError("truncated file: its superblock says ", Eof,
                     " bytes, the file has ", FileSize);
  if (uint64_t Root = littleEndian(Head, L.RootAt, 8); Root >= Eof)
    return makeError("damaged HDF5 superblock: the root group at ", Root,
                     " lies past the end of the file's data (", Eof, ")");
  return Error::success();
}

Error checkSuperblockOf(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary | std::ios::ate);
  if (!In)
    return Error::make("cannot read file");
  uint64_t Size = static_cast<uint64_t>(In.tellg());
  uint8_t Head[96] = {};
  In.seekg(0);
  In.read(reinterpret_cast<char *>(Head), sizeof(Head));
  return checkSuperblock(std::span(Head, static_cast<size_t>(In.gcount())),
                         Size);
}

} // namespace r3
