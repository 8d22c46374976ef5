// What the fuzz targets share: the input as the file, descriptor or text an
// entry point takes. A target whose parser reads a path writes the input to
// one temporary file per process, rewritten for every input; one that reads a
// descriptor gets a memfd holding the input, so a stream "ends" where the
// input does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace r3::fuzz {

/// The input as bytes and as text.
inline std::span<const uint8_t> bytes(const uint8_t *Data, size_t Size) {
  return {Data, Size};
}
inline std::string_view text(const uint8_t *Data, size_t Size) {
  return {reinterpret_cast<const char *>(Data), Size};
}

/// The path of this process's scratch file with the given suffix (".h5"),
/// in a folder of its own that the process removes at exit.
std::string scratchPath(const std::string &Suffix);
/// Writes Bytes to scratchPath(Suffix) and returns the path.
std::string writeScratch(std::span<const uint8_t> Bytes,
                         const std::string &Suffix);
/// A memfd holding Bytes, positioned at its start; the caller closes it.
int memoryFd(std::span<const uint8_t> Bytes);

/// Splits the input at its first occurrence of Separator: the part before
/// (or everything, when there is none) and the part after.
std::pair<std::string_view, std::string_view> splitAt(std::string_view In,
                                                      std::string_view Sep);

} // namespace r3::fuzz
