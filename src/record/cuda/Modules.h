// The module images the application loads, as CUPTI's module-loaded resource
// callback hands them over (copied there: CUPTI's pointer is valid only inside
// the callback), with the __device__/__constant__ globals their ELF symbol
// tables name. A launch's CUfunction is matched to its image by name; the
// globals' addresses come from the launch's own module (cuModuleGetGlobal).
#pragma once

#include "capture/Capture.h"
#include "cubin/CubinSymbols.h"
#include "support/Error.h"

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace r3::cuda {

struct LoadedModule {
  uint32_t Id = 0; ///< CUPTI's module id
  std::vector<uint8_t> Image;
  CubinSymbols Symbols;
  std::string ParseError; ///< why the symbol table could not be read
  bool Announced = false; ///< its Module frame was sent
};

class ModuleTable {
public:
  /// Keeps a copy of a module image that was just loaded; returns it (valid
  /// for good: modules are never dropped).
  const LoadedModule &onLoaded(uint32_t Id, const void *Image, size_t Size);
  /// The most recently loaded module whose image defines the kernel Name, or
  /// null. The pointer stays valid: modules are never dropped.
  LoadedModule *moduleOf(const std::string &Name);
  /// "3 module images, 1 unreadable (cubin: not an ELF image)", for messages.
  std::string describe();

private:
  std::mutex Lock;
  std::vector<std::unique_ptr<LoadedModule>> Modules;
};

/// The addresses and sizes of M's globals in the module F belongs to.
Expected<std::vector<GlobalInfo>> resolveGlobals(CUfunction F,
                                                 const LoadedModule &M);

} // namespace r3::cuda
