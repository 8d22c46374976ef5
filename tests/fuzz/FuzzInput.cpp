// The fuzz targets' scratch files and memory descriptors (FuzzInput.h).
#include "FuzzInput.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/mman.h>
#include <unistd.h>

namespace r3::fuzz {
namespace fs = std::filesystem;

namespace {
const fs::path &scratchDir() {
  static const fs::path Dir = [] {
    fs::path D =
        fs::temp_directory_path() / ("r3-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(D);
    std::atexit([] {
      std::error_code EC;
      fs::remove_all(scratchDir(), EC);
    });
    return D;
  }();
  return Dir;
}
} // namespace

std::string scratchPath(const std::string &Suffix) {
  return (scratchDir() / ("input" + Suffix)).string();
}

std::string writeScratch(std::span<const uint8_t> Bytes,
                         const std::string &Suffix) {
  std::string Path = scratchPath(Suffix);
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  Out.write(reinterpret_cast<const char *>(Bytes.data()),
            static_cast<std::streamsize>(Bytes.size()));
  return Path;
}

int memoryFd(std::span<const uint8_t> Bytes) {
  int Fd = ::memfd_create("r3-fuzz-input", 0);
  if (Fd < 0)
    std::abort();
  size_t Done = 0;
  while (Done < Bytes.size()) {
    ssize_t N = ::write(Fd, Bytes.data() + Done, Bytes.size() - Done);
    if (N <= 0)
      std::abort();
    Done += static_cast<size_t>(N);
  }
  ::lseek(Fd, 0, SEEK_SET);
  return Fd;
}

std::pair<std::string_view, std::string_view> splitAt(std::string_view In,
                                                      std::string_view Sep) {
  size_t At = In.find(Sep);
  if (At == std::string_view::npos)
    return {In, {}};
  return {In.substr(0, At), In.substr(At + Sep.size())};
}

} // namespace r3::fuzz
