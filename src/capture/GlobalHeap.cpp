// Checks of variable-length strings and their global heap collections
// before HDF5 reads them (GlobalHeap.h). The walk over a collection's
// objects is the one H5HG__cache_heap_deserialize does in HDF5 1.10, with
// the bounds it lacks; H5HG_read then copies an object's size in bytes from
// its place in the collection into a buffer of the element's length.
#include "capture/GlobalHeap.h"

#include "support/Bytes.h"

#include <cstring>
#include <map>
#include <vector>

namespace r3 {

namespace {
constexpr uint64_t CollectionHeaderBytes = 16, ObjectHeaderBytes = 16;

/// A collection's objects: index -> size in bytes.
using Objects = std::map<uint64_t, uint64_t>;

Error damaged(uint64_t At, const std::string &What) {
  return makeError("damaged global heap at offset ", At, ": ", What);
}

/// The collection's header: its size, checked against the file.
Expected<uint64_t> collectionSize(uint64_t At, uint64_t FileSize,
                                  const ReadAt &Read) {
  if (At > FileSize || FileSize - At < CollectionHeaderBytes)
    return damaged(At, "past the end of the file (" + std::to_string(FileSize) +
                           " bytes)");
  uint8_t Head[CollectionHeaderBytes];
  R3_TRY(Read(At, Head));
  if (std::memcmp(Head, "GCOL", 4) != 0)
    return damaged(At, "no collection there (signature GCOL)");
  if (Head[4] != 1)
    return damaged(At, "collection version " + std::to_string(Head[4]) +
                           ", expected 1");
  uint64_t Size = littleEndian(Head, 8, 8);
  if (Size < CollectionHeaderBytes || Size > FileSize - At)
    return damaged(At, "a collection of " + std::to_string(Size) +
                           " bytes does not fit a file of " +
                           std::to_string(FileSize) + " bytes");
  return Size;
}

/// The objects of the collection at At, walked as HDF5 walks them.
Expected<Objects> readCollection(uint64_t At, uint64_t FileSize,
                                 const ReadAt &Read) {
  uint64_t Size = 0;
  R3_TRY(moveInto(collectionSize(At, FileSize, Read), Size));
  std::vector<uint8_t> Bytes(Size);
  R3_TRY(Read(At, Bytes));
  Objects Out;
  uint64_t Pos = CollectionHeaderBytes;
  while (Pos < Size) {
    if (Size - Pos < ObjectHeaderBytes)
      break; // too small for an object header: free space
    uint64_t Index = littleEndian(Bytes, Pos, 2),
             ObjectSize = littleEndian(Bytes, Pos + 8, 8);
    uint64_t Left = Size - Pos - ObjectHeaderBytes;
    std::string What = (Index > 0 ? "object " + std::to_string(Index)
                                  : std::string("its free space")) +
                       " at offset " + std::to_string(At + Pos) + " claims " +
                       std::to_string(ObjectSize) + " bytes";
    // The free space's size counts its own header (HDF5 would step by 0
    // bytes for ever on one of 0).
    if (Index == 0 && ObjectSize < ObjectHeaderBytes)
      return damaged(At, What + ", less than its own header");
    // An object's bytes are padded to a multiple of 8.
    bool Fits = Index > 0
                    ? ObjectSize <= Left && (ObjectSize + 7) / 8 * 8 <= Left
                    : ObjectSize - ObjectHeaderBytes <= Left;
    if (!Fits)
      return damaged(At, What + ", more than the " +
                             std::to_string(Size - Pos) +
                             " bytes left in the collection");
    if (Index > 0)
      Out[Index] = ObjectSize;
    Pos +=
        Index > 0 ? ObjectHeaderBytes + (ObjectSize + 7) / 8 * 8 : ObjectSize;
  }
  return Out;
}

/// One element against the collections read so far (reading its own).
Error checkElement(uint64_t Element, std::span<const uint8_t> Raw,
                   uint64_t FileSize, const ReadAt &Read,
                   std::map<uint64_t, Objects> &Collections) {
  uint64_t Length = littleEndian(Raw, 0, 4), At = littleEndian(Raw, 4, 8),
           Index = littleEndian(Raw, 12, 4);
  if (At == 0)
    return Error::success(); // a null string: HDF5 reads no heap for it
  auto It = Collections.find(At);
  if (It == Collections.end()) {
    Objects Os;
    R3_TRY(moveInto(readCollection(At, FileSize, Read), Os));
    It = Collections.emplace(At, std::move(Os)).first;
  }
  auto Object = It->second.find(Index);
  if (Object == It->second.end())
    return damaged(At, "string " + std::to_string(Element) +
                           " refers to object " + std::to_string(Index) +
                           ", which the collection does not hold");
  if (Object->second != Length)
    return damaged(At, "object " + std::to_string(Index) + " holds " +
                           std::to_string(Object->second) + " bytes, string " +
                           std::to_string(Element) + " says " +
                           std::to_string(Length));
  return Error::success();
}
} // namespace

Error checkVlenStrings(uint64_t Offset, uint64_t Count, uint64_t FileSize,
                       const ReadAt &Read) {
  if (Offset > FileSize || Count > (FileSize - Offset) / VlenElementBytes)
    return makeError(Count, " strings at offset ", Offset,
                     " do not fit a file of ", FileSize, " bytes");
  std::vector<uint8_t> Elements(Count * VlenElementBytes);
  R3_TRY(Read(Offset, Elements));
  std::map<uint64_t, Objects> Collections;
  for (uint64_t I = 0; I < Count; ++I)
    R3_TRY(checkElement(
        I, std::span(Elements).subspan(I * VlenElementBytes, VlenElementBytes),
        FileSize, Read, Collections));
  return Error::success();
}

} // namespace r3
