// What r3 checks of a capture's variable-length strings before HDF5 reads
// them. Such a string is stored as an element of 16 bytes (its length, the
// address of a global heap collection, an object index in it) and its bytes
// as an object of that collection. HDF5 1.10 trusts the collection's size
// and each object's size: a damaged size makes it read gigabytes, or copy
// past its buffers (H5HG_read; tests/fuzz/README.md). The layout is that of
// the HDF5 file format specification, section III.E ("Global Heap"):
//
//   collection: "GCOL", version 1, 3 reserved bytes, its size (8 bytes,
//               header included), then objects
//   object:     index (2 bytes), reference count (2), reserved (4), size
//               (8), then size bytes padded to a multiple of 8; index 0 is
//               the free space, whose size counts its own header; a tail
//               too small for an object header is free space too
//
// checkVlenStrings walks every collection the elements refer to as HDF5
// will, and refuses a collection that does not fit the file, an object that
// does not fit its collection, and an element whose object is missing or
// holds other than the element's length in bytes.
#pragma once

#include "capture/ReadAt.h"

#include <cstdint>

namespace r3 {

/// The bytes of one element of a variable-length string dataset as HDF5
/// stores it with 8-byte addresses.
inline constexpr uint64_t VlenElementBytes = 16;

/// Checks Count variable-length string elements stored at Offset of a file
/// of FileSize bytes, and the global heap collections they refer to.
/// Elements with collection address 0 are null strings and refer to none.
Error checkVlenStrings(uint64_t Offset, uint64_t Count, uint64_t FileSize,
                       const ReadAt &Read);

} // namespace r3
