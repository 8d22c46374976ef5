// What r3 checks of an object's header before HDF5 opens it as a dataset,
// decodes its attributes or converts its variable-length strings.
// HDF5 1.10 trusts the sizes inside an attribute message: a damaged one
// makes its decoder strdup a name with no terminating null inside the
// message, or copy a value larger than what is left of it (heap reads past
// a buffer, found by fuzzing: tests/fuzz/README.md). r3 reads attributes
// on every group it opens, and H5Aexists decodes every attribute message of
// the object, so each object's header is checked first. The layout is that
// of the HDF5 file format specification, section IV.A:
//
//   version 1 header: version 1, reserved, message count (2 bytes),
//                     reference count (4), size of the first chunk's
//                     messages (4), 4 bytes of padding, then the messages
//   message:          type (2), size of its data (2), flags (1), reserved
//                     (3), then the data; a continuation message (type
//                     0x10: offset and length, 8 bytes each) names a
//                     further chunk of messages
//   attribute (0x0C): version 1-3, flags (versions 2-3) or reserved, the
//                     sizes of the name, datatype and dataspace (2 bytes
//                     each), the name's encoding (version 3), then the
//                     name, datatype and dataspace (each padded to 8 bytes
//                     in version 1) and the value: the dataspace's elements
//                     times the datatype's size
//
// A dataset's datatype message is checked too: a class r3 writes, with its
// properties inside the message (HDF5 decodes and copies, say, an
// enumeration's members without bounds), and a variable-length string's
// character type (its base type, 8 bytes into the message, size at 12) of
// one byte, or HDF5 converts each string with a buffer of its length times
// a damaged size. So is its data
// layout message: a chunked layout's dimensions must lie inside the message
// and none be 0, since HDF5 divides by them when it opens the dataset.
//
// Version 2 headers ("OHDR") are checksummed, and HDF5 verifies the
// checksum before it decodes a message, so they are left to HDF5. Of the
// datatypes, r3 writes and reads only integers and fixed-length strings in
// attributes (floating point is accepted too); any other class, and a
// shared datatype or dataspace, is refused as not r3's, since checking it
// would mean decoding what HDF5 decodes.
#pragma once

#include "capture/ReadAt.h"

#include <cstdint>

namespace r3 {

/// Checks the object header at Addr of a file of FileSize bytes: in every
/// attribute message the name, datatype, dataspace and value lie inside the
/// message, a dataset's datatype is one r3 writes (variable-length strings
/// of 1-byte characters among them), and a chunked layout has no dimension
/// 0. A version 2 header is not checked (see above).
Error checkObjectHeader(uint64_t Addr, uint64_t FileSize, const ReadAt &Read);

} // namespace r3
