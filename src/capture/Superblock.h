// What r3 checks of a capture file before HDF5 reads it. HDF5 trusts the
// addresses and sizes in a file's metadata, and some damaged files make it
// allocate or read what no capture could hold (tests/fuzz/README.md lists
// what fuzzing found inside HDF5). The superblock, the file's first bytes,
// is simple enough to check here: the signature, a version HDF5 writes,
// 8-byte addresses as r3's writer uses them, and addresses that stay inside
// the file, so that a truncated or foreign file is refused with a clear
// message before HDF5 follows anything.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <span>
#include <string>

namespace r3 {

/// Checks the superblock at the start of File (its first bytes, at least 96
/// when the file has them) against the file's size.
Error checkSuperblock(std::span<const uint8_t> Head, uint64_t FileSize);

/// Reads the start of the file at Path and checks its superblock.
Error checkSuperblockOf(const std::string &Path);

} // namespace r3
