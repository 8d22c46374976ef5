// Checks of a version 1 object header's attribute, datatype and layout
// messages before HDF5 decodes or uses them (ObjectHeader.h). The walk over
// the chunks is the one H5O__chunk_deserialize does in HDF5 1.10; the
// attribute's fields are read in the order H5O_attr_decode reads them, with
// the bounds it lacks.
#include "capture/ObjectHeader.h"

#include "support/Bytes.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace r3 {

namespace {
constexpr uint64_t PrefixBytes = 16, MessageHeaderBytes = 8;
constexpr uint16_t DataspaceType = 0x01, DatatypeType = 0x03, LayoutType = 0x08,
                   ContinuationType = 0x10, AttributeType = 0x0C;
constexpr uint8_t SharedMessageFlag = 0x02;
/// A bound on the chunks of one header (r3 writes one or two), so that a
/// damaged continuation cannot make the walk long.
constexpr size_t MaxChunks = 1024;
/// HDF5's H5S_MAX_RANK.
constexpr unsigned MaxRank = 32;
/// HDF5's H5O_LAYOUT_NDIMS: a chunk's rank, plus one for the element.
constexpr unsigned MaxChunkRank = MaxRank + 1;

using Bytes = std::span<const uint8_t>;

uint64_t align8(uint64_t N) { return (N + 7) / 8 * 8; }

/// What is wrong with an attribute's datatype, or a dataset's but for a
/// variable-length string (checkDatasetType), or nothing: one of the
/// classes r3 writes, whose properties lie inside the message (HDF5 1.10
/// decodes and copies, say, an enumeration's members without bounds).
/// ElementSize is the size HDF5 will take for each element.
std::string checkDatatype(Bytes D, uint64_t &ElementSize, const char *Where) {
  if (D.size() < 8)
    return "a datatype of " + std::to_string(D.size()) +
           " bytes, shorter than its 8-byte header";
  unsigned Class = D[0] & 0x0F;
  uint64_t Need = 0;
  switch (Class) {
  case 0: // fixed-point: bit offset and precision
    Need = 12;
    break;
  case 1: // floating-point: offset, precision, exponent and mantissa fields
    Need = 20;
    break;
  case 3: // string: no properties
    Need = 8;
    break;
  default:
    return "datatype class " + std::to_string(Class) +
           ", which r3 does not write in " + Where;
  }
  if (D.size() < Need)
    return "a datatype of class " + std::to_string(Class) + " in " +
           std::to_string(D.size()) + " bytes, shorter than its " +
           std::to_string(Need);
  ElementSize = littleEndian(D, 4, 4);
  return "";
}

/// What is wrong with an attribute's dataspace, or nothing; Elements is its
/// element count.
std::string checkDataspace(Bytes D, uint64_t &Elements) {
  if (D.size() < 4)
    return "a dataspace of " + std::to_string(D.size()) + " bytes";
  unsigned Version = D[0], Rank = D[1], Flags = D[2];
  if (Version != 1 && Version != 2)
    return "dataspace version " + std::to_string(Version) +
           " (expected 1 or 2)";
  if (Rank > MaxRank)
    return "a dataspace of rank " + std::to_string(Rank) + " (at most " +
           std::to_string(MaxRank) + ")";
  uint64_t Header = Version == 1 ? 8 : 4;
  uint64_t Need = Header + 8ull * Rank * ((Flags & 1) ? 2 : 1);
  if (D.size() < Need)
    return "a dataspace of rank " + std::to_string(Rank) + " in " +
           std::to_string(D.size()) + " bytes, shorter than its " +
           std::to_string(Need);
  if (Version == 2 && D[3] > 2)
    return "dataspace type " + std::to_string(D[3]) + " (expected 0-2)";
  if (Version == 2 && D[3] == 2) { // null: no elements
    Elements = 0;
    return "";
  }
  Elements = 1; // a scalar, or the product of the dimensions
  for (unsigned I = 0; I < Rank; ++I) {
    uint64_t Dim = littleEndian(D, Header + 8ull * I, 8);
    if (Dim != 0 && Elements > UINT64_MAX / Dim)
      return "a dataspace whose element count overflows";
    Elements *= Dim;
  }
  return "";
}

/// What is wrong with one attribute message's data, or nothing.
std::string checkAttribute(Bytes D) {
  if (D.size() < 8)
    return "an attribute message of " + std::to_string(D.size()) + " bytes";
  unsigned Version = D[0];
  if (Version < 1 || Version > 3)
    return "attribute message version " + std::to_string(Version) +
           " (expected 1, 2 or 3)";
  if (Version >= 2 && (D[1] & 0x03))
    return "an attribute with a shared datatype or dataspace, which r3 does "
           "not write";
  uint64_t NameSize = littleEndian(D, 2, 2), DtSize = littleEndian(D, 4, 2),
           DsSize = littleEndian(D, 6, 2);
  auto Pad = [&](uint64_t N) { return Version == 1 ? align8(N) : N; };
  uint64_t Pos = Version == 3 ? 9 : 8;
  auto Field = [&](uint64_t Size, const char *What) -> std::string {
    if (Pos > D.size() || Size > D.size() - Pos)
      return std::string("its ") + What + " (" + std::to_string(Size) +
             " bytes at " + std::to_string(Pos) + ") runs past the message (" +
             std::to_string(D.size()) + " bytes)";
    return "";
  };
  if (std::string Why = Field(NameSize, "name"); !Why.empty())
    return Why;
  if (NameSize == 0 || !std::memchr(D.data() + Pos, 0, NameSize))
    return "its name has no terminating null within its " +
           std::to_string(NameSize) + " bytes";
  Pos += Pad(NameSize);
  if (std::string Why = Field(DtSize, "datatype"); !Why.empty())
    return Why;
  uint64_t ElementSize = 0;
  if (std::string Why = checkDatatype(D.subspan(Pos, DtSize), ElementSize,
                                     "attributes (it writes integers and "
                                     "fixed-length strings)");
      !Why.empty())
    return Why;
  Pos += Pad(DtSize);
  if (std::string Why = Field(DsSize, "dataspace"); !Why.empty())
    return Why;
  uint64_t Elements = 0;
  if (std::string Why = checkDataspace(D.subspan(Pos, DsSize), Elements);
      !Why.empty())
    return Why;
  Pos += Pad(DsSize);
  if (Pos > D.size())
    return "its dataspace runs past the message";
  uint64_t Left = D.size() - Pos;
  if (ElementSize != 0 && Elements > Left / ElementSize)
    return "its value (" + std::to_string(Elements) + " elements of " +
           std::to_string(ElementSize) + " bytes) is larger than the " +
           std::to_string(Left) + " bytes left in the message";
  return "";
}

/// What is wrong with a dataset's datatype message, or nothing: a class r3
/// writes (checkDatatype), or a variable-length string of one-byte
/// characters. HDF5 converts such a string with buffers of its length times
/// the character size, so a damaged size (once 2.5 GB a character) made it
/// allocate gigabytes.
std::string checkDatasetType(Bytes D) {
  const char *Where = "datasets (it writes integers and variable-length "
                      "strings)";
  uint64_t Size = 0;
  if (D.size() < 8 || (D[0] & 0x0F) != 9)
    return checkDatatype(D, Size, Where);
  if ((D[1] & 0x0F) != 1)
    return "a variable-length sequence, which r3 does not write";
  // The character type follows the 8-byte header: a fixed-point type.
  if (D.size() < 20)
    return "a variable-length string type of " + std::to_string(D.size()) +
           " bytes, too short for its character type";
  if ((D[8] & 0x0F) != 0)
    return "a variable-length string of characters of class " +
           std::to_string(D[8] & 0x0F) + " (expected 0, fixed-point)";
  if (uint64_t Char = littleEndian(D, 12, 4); Char != 1)
    return "a variable-length string of " + std::to_string(Char) +
           "-byte characters (expected 1)";
  return "";
}

/// What is wrong with a data layout message, or nothing: a chunked layout's
/// dimensions lie inside the message and none is 0. HDF5 1.10 divides by
/// them when it opens the dataset (a damaged 0 was a division by zero under
/// H5D__chunk_set_info). Layout versions 1 and 2: version, rank, class, 5
/// reserved bytes, an address unless compact, then 4-byte dimensions;
/// version 3: version, class, then for a chunked one its rank, address and
/// 4-byte dimensions; version 4 as 3, with flags before the rank and the
/// dimensions' width (1-8 bytes) after it.
std::string checkLayout(Bytes D, unsigned &ChunkRank) {
  if (D.size() < 2)
    return "a layout message of " + std::to_string(D.size()) + " bytes";
  unsigned Version = D[0];
  uint64_t Rank = 0, At = 0, Width = 4;
  if (Version == 1 || Version == 2) {
    if (D.size() < 8 || D[2] != 2)
      return "";
    Rank = D[1];
    At = 16;
  } else if (Version == 3 || Version == 4) {
    if (D[1] != 2)
      return ""; // compact or contiguous
    uint64_t Head = Version == 3 ? 3 : 5;
    if (D.size() < Head)
      return "a chunked layout message of " + std::to_string(D.size()) +
             " bytes";
    Rank = Version == 3 ? D[2] : D[3];
    Width = Version == 3 ? 4 : D[4];
    At = Version == 3 ? Head + 8 : Head;
    if (Width < 1 || Width > 8)
      return "chunk dimensions of " + std::to_string(Width) + " bytes";
  } else {
    return ""; // HDF5 refuses versions it does not know
  }
  // The rank counts the element as a last dimension: at least 2.
  if (Rank < 2 || Rank > MaxChunkRank)
    return "a chunked layout of rank " + std::to_string(Rank) +
           " (expected 2 to " + std::to_string(MaxChunkRank) + ")";
  ChunkRank = static_cast<unsigned>(Rank);
  if (D.size() < At || (D.size() - At) / Width < Rank)
    return "its " + std::to_string(Rank) + " chunk dimensions run past the " +
           "message (" + std::to_string(D.size()) + " bytes)";
  for (uint64_t I = 0; I < Rank; ++I)
    if (littleEndian(D, At + I * Width, Width) == 0)
      return "chunk dimension " + std::to_string(I) + " is 0";
  return "";
}

Error damaged(uint64_t Addr, const std::string &What) {
  return makeError("damaged object header at offset ", Addr, ": ", What);
}
} // namespace

Error checkObjectHeader(uint64_t Addr, uint64_t FileSize,
                        const ReadAt &Read) {
  if (Addr > FileSize || FileSize - Addr < PrefixBytes)
    return damaged(Addr, "past the end of the file (" +
                             std::to_string(FileSize) + " bytes)");
  uint8_t Prefix[PrefixBytes];
  R3_TRY(Read(Addr, Prefix));
  if (Prefix[0] != 1)
    return Error::success(); // version 2 ("OHDR"): checksummed, HDF5 checks
  struct Chunk {
    uint64_t At, Size;
  };
  std::vector<Chunk> Chunks{{Addr + PrefixBytes, littleEndian(Prefix, 8, 4)}};
  // A chunked layout's rank and the dataspace's (the layout counts the
  // element as one more dimension): HDF5 divides by each chunk dimension of
  // the dataspace's rank, so a layout of fewer is a division by zero.
  unsigned ChunkRank = 0, SpaceRank = 0;
  uint64_t LayoutAt = 0;
  std::set<uint64_t> Seen{Addr + PrefixBytes};
  for (size_t C = 0; C < Chunks.size(); ++C) {
    Chunk Ch = Chunks[C];
    if (Ch.At > FileSize || Ch.Size > FileSize - Ch.At)
      return damaged(Addr, "a chunk of " + std::to_string(Ch.Size) +
                               " bytes at offset " + std::to_string(Ch.At) +
                               " does not fit a file of " +
                               std::to_string(FileSize) + " bytes");
    std::vector<uint8_t> B(Ch.Size);
    R3_TRY(Read(Ch.At, B));
    for (uint64_t Pos = 0; Ch.Size - Pos >= MessageHeaderBytes;) {
      uint64_t Type = littleEndian(B, Pos, 2), Size = littleEndian(B, Pos + 2, 2);
      uint8_t Flags = B[Pos + 4];
      uint64_t Data = Pos + MessageHeaderBytes, At = Ch.At + Pos;
      if (Size > Ch.Size - Data)
        return damaged(Addr, "the message at offset " + std::to_string(At) +
                                 " (" + std::to_string(Size) +
                                 " bytes) runs past its chunk");
      Bytes Message(B.data() + Data, Size);
      if (Type == ContinuationType) {
        if (Size < 16)
          return damaged(Addr, "a continuation message of " +
                                   std::to_string(Size) + " bytes at offset " +
                                   std::to_string(At));
        uint64_t Next = littleEndian(Message, 0, 8),
                 Length = littleEndian(Message, 8, 8);
        if (!Seen.insert(Next).second || Chunks.size() == MaxChunks)
          return damaged(Addr, "its continuation messages loop or exceed " +
                                   std::to_string(MaxChunks) + " chunks");
        Chunks.push_back({Next, Length});
      } else if (Type == DatatypeType) {
        if (Flags & SharedMessageFlag)
          return damaged(Addr, "a shared datatype message at offset " +
                                   std::to_string(At) +
                                   ", which r3 does not write");
        if (std::string Why = checkDatasetType(Message); !Why.empty())
          return damaged(Addr, "the datatype message at offset " +
                                   std::to_string(At) + ": " + Why);
      } else if (Type == LayoutType) {
        if (std::string Why = checkLayout(Message, ChunkRank); !Why.empty())
          return damaged(Addr, "the layout message at offset " +
                                   std::to_string(At) + ": " + Why);
        LayoutAt = At;
      } else if (Type == DataspaceType && Size >= 2) {
        SpaceRank = Message[1];
      } else if (Type == AttributeType) {
        if (Flags & SharedMessageFlag)
          return damaged(Addr, "a shared attribute message at offset " +
                                   std::to_string(At) +
                                   ", which r3 does not write");
        if (std::string Why = checkAttribute(Message); !Why.empty())
          return damaged(Addr, "the attribute message at offset " +
                                   std::to_string(At) + ": " + Why);
      }
      Pos = Data + Size;
    }
  }
  if (ChunkRank && ChunkRank != SpaceRank + 1)
    return damaged(Addr, "the layout message at offset " +
                             std::to_string(LayoutAt) + ": a chunked layout of "
                             "rank " + std::to_string(ChunkRank) +
                             " for a dataspace of rank " +
                             std::to_string(SpaceRank) + " (expected " +
                             std::to_string(SpaceRank + 1) + ")");
  return Error::success();
}

} // namespace r3
