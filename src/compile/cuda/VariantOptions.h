// The one place a CUDA variant's compile options are built: from the capture
// (its compute capability and, for a specialized variant, the recorded
// launch's values), the launch as the variant runs it (a changed block and
// the grid its rule gives), the source, and the compiler settings
// (CompileSettings.h). The campaign's worker, `r3 compile`, `r3 replay
// --source` and `r3 export` all compile through it, so that the cubin an
// export ships is the one a campaign measured.
#pragma once

#include "capture/Capture.h"
#include "compile/CompileSettings.h"
#include "compile/cuda/CudaCompiler.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

class CaptureReader;

/// The variant's code: its source file, the front end's flags, the kernel.
struct VariantSource {
  std::string Path;
  std::vector<std::string> Flags; ///< -I, -D, -std=...
  std::string Kernel;             ///< mangled or demangled name
};

/// The recorded launch a variant is compiled for, as it will run.
struct VariantLaunch {
  /// None: no capture (`r3 compile` without --capture): the caller sets
  /// the compute capability, and nothing can be specialized.
  const CaptureReader *Capture = nullptr;
  uint32_t Index = 0;        ///< the capture's launch index
  std::optional<Dim3> Block; ///< none: the recorded block
  std::string GridRule;      ///< LaunchRule.h syntax; empty: keep-threads
};

/// The compile options of a variant. An error when the settings specialize
/// and there is no capture, when the launch is not in the capture, or when
/// the grid rule does not parse or apply.
Expected<CudaCompileOptions> cudaCompileOptions(const VariantSource &Source,
                                                const CompileSettings &Settings,
                                                const VariantLaunch &Launch,
                                                std::string CacheDir);

} // namespace r3
