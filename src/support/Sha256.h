// SHA-256 (FIPS 180-4), written out here rather than taken from LLVM because
// src/support is linked into the record library that runs inside other
// people's processes, which links libc and the C++ runtime only. Candidate
// identities and the compile cache's keys both use it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace r3 {

/// An incremental SHA-256: update() any number of times, then hexDigest().
class Sha256 {
public:
  Sha256();
  void update(std::string_view Bytes);
  /// The digest as 64 lower-case hex digits; the object must not be updated
  /// afterwards.
  std::string hexDigest();

private:
  void block(const uint8_t *P);
  std::array<uint32_t, 8> H;
  std::array<uint8_t, 64> Buffer{};
  size_t Buffered = 0;
  uint64_t Length = 0; ///< bytes given so far
};

/// The SHA-256 of Text, as 64 lower-case hex digits.
std::string sha256Hex(std::string_view Text);

} // namespace r3
