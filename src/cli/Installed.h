// The files r3 installs beside itself in <prefix>/lib/r3 (the host pass
// plugin and runtime, the CUDA injection library), found from the running r3
// executable so that a build tree and an installed tree both work.
#pragma once

#include "support/Error.h"

#include <string>

namespace r3::cli {

/// A file of r3's library directory, and the build target that makes it.
struct Installed {
  const char *File, *What, *Target;
};

/// The libraries `r3 record` and `r3 run` put into applications.
inline constexpr Installed CudaInjectionLibrary{
    "libr3-cuda-inject.so", "CUDA injection library", "r3-cuda-inject"};
inline constexpr Installed HostUseLibrary{"libr3-host-use.so",
                                          "host use-library", "r3-host-use"};

/// The path of F, which must exist; the error says where r3 looked and which
/// target builds it.
Expected<std::string> installedFile(const Installed &F);

} // namespace r3::cli
