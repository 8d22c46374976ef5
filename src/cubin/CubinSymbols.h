// Reads the ELF symbol table of a cubin: the module's __device__ and
// __constant__ variables (name, size, section) and its kernels. The CUPTI
// injection library uses it on each module image it sees, to know which globals
// to snapshot by name, so this file depends on libc and the C++ standard
// library only.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// Where a module variable lives.
enum class GlobalSpace { Device, Constant };

struct CubinGlobal {
  std::string Name;
  uint64_t Size = 0;
  GlobalSpace Space = GlobalSpace::Device;
  bool Initialized =
      false; ///< has an initial value in the image (.nv.global.init)
};

struct CubinSymbols {
  std::vector<CubinGlobal> Globals;
  std::vector<std::string> Kernels; ///< mangled names of the entry functions
};

/// Parses a cubin (ELF64, as nvcc -cubin, ptxas or nvJitLink produce). Image
/// bytes are untrusted: every offset is bounds-checked, and a damaged image is
/// an error saying what is wrong, never a crash.
Expected<CubinSymbols> readCubinSymbols(std::span<const uint8_t> Image);

} // namespace r3
