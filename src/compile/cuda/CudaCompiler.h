// The CUDA variant compiler: one kernel of a .cu source compiled device-only
// to a cubin for a given compute capability, through clang-19 and LLVM
// (front end -> IR -> the given new-pass-manager pipeline -> NVPTX -> PTX ->
// nvJitLink) or through NVRTC, with launch bounds, a register limit and the
// recorded values of a launch folded in as constants. Needs no GPU. Each
// stage is cached by the hash of what determines it (front-end IR per source
// and flags, PTX per pipeline, cubin per codegen setting).
#pragma once

#include "capture/Capture.h"
#include "compile/CompileSettings.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// The recorded values a specialized kernel folds in as constants (which
/// of them, the settings say): the launch's parameters and its shape as the
/// variant will run it.
struct Specialization {
  std::vector<ParamInfo> Layout; ///< the capture's parameter layout
  std::vector<uint8_t> Params;   ///< the recorded parameter buffer
  Dim3 Grid = {1, 1, 1}, Block = {1, 1, 1}; ///< as the launch will run
};

/// One compile. Build it with cudaCompileOptions (VariantOptions.h), which
/// every caller uses.
struct CudaCompileOptions {
  std::string SourcePath;
  std::vector<std::string> Flags; ///< -I, -D, -std=... for the front end
  std::string Kernel;             ///< mangled or demangled name
  int ComputeMajor = 9, ComputeMinor = 0;
  /// Toolchain, pipeline (empty: default<O3>, llvm only), codegen level
  /// (NVPTX codegen and ptxas -O; -1: 3), registers, fast math, bounds,
  /// nvcc options, and which recorded values to fold in.
  CompileSettings Settings;
  /// The recorded values; present exactly when Settings.specialized().
  std::optional<Specialization> Specialize;
  std::string CacheDir; ///< empty: no cache
};

/// What the compiler reports: the JSON keys of `r3 compile --format json`.
struct CudaCompileReport {
  std::string Kernel;   ///< the mangled name that was compiled
  std::string Pipeline; ///< the pipeline that ran (the default resolved)
  int CodegenOpt = 3;   ///< the codegen level it ran at (the default resolved)
  int64_t Registers = -1, Spills = -1, SharedBytes = -1, LocalBytes = -1;
  uint64_t PtxBytes = 0;
  double CompileMs = 0; ///< all stages, cache lookups included
  double FrontendMs = 0, OptMs = 0, CodegenMs = 0, LinkMs = 0;
  bool FrontendCached = false, PtxCached = false, CubinCached = false;
  std::vector<std::string> ParamNames; ///< from the source; may be empty
  std::string Log;                     ///< ptxas/nvJitLink information lines
};

struct CudaCompiled {
  std::string Ir; ///< textual LLVM IR after the pipeline (LLVM toolchain)
  std::string Ptx;
  std::vector<uint8_t> Cubin;
  CudaCompileReport Report;
};

/// Compiles O.Kernel. Every failure (the source does not compile, a malformed
/// pipeline, no such kernel, ptxas rejects the PTX) is an error whose message
/// says where and what, ready for a candidate's compile_error.
Expected<CudaCompiled> compileCudaKernel(const CudaCompileOptions &O);

/// compileCudaKernel in a forked child (compile/Isolate.h): a compiler that
/// aborts (an LLVM fatal error), crashes or runs past TimeoutSeconds is an
/// error with its message, never the end of the caller.
Expected<CudaCompiled> compileCudaKernelIsolated(const CudaCompileOptions &O,
                                                 double TimeoutSeconds = 300);

/// A compiled result as bytes, and back (how it crosses a pipe).
/// clang-19's command line for a CUDA source's device side as the LLVM
/// toolchain reads it (its shim, the toolkit's headers), without an action:
/// the caller adds one (an AST dump, Rewrite.h).
std::vector<std::string> cudaSyntaxArgv(const std::string &Source,
                                        const std::vector<std::string> &Flags,
                                        int ComputeMajor, int ComputeMinor);

std::vector<uint8_t> serializeCompiled(const CudaCompiled &C);
Expected<CudaCompiled> deserializeCompiled(std::span<const uint8_t> In);

} // namespace r3
