// The CUDA variant compiler: one kernel of a .cu source compiled device-only
// to a cubin for a given compute capability, through clang-19 and LLVM
// (front end -> IR -> the given new-pass-manager pipeline -> NVPTX -> PTX ->
// nvJitLink) or through NVRTC, with launch bounds, a register limit and the
// recorded values of a launch folded in as constants. Needs no GPU. Each
// stage is cached by the hash of what determines it (front-end IR per source
// and flags, PTX per pipeline, cubin per codegen setting).
#pragma once

#include "compile/cuda/LaunchBounds.h"
#include "capture/Capture.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace r3 {

/// Who compiles a variant: clang-19 and LLVM (the pass-order search),
/// NVRTC, or nvcc with the application's own flags (compiler tuning from
/// the application's own code generator).
enum class CudaToolchain { Llvm, Nvrtc, Nvcc };

/// "llvm", "nvrtc", "nvcc"; parse gives none for another word.
const char *cudaToolchainName(CudaToolchain T);
std::optional<CudaToolchain> parseCudaToolchain(const std::string &Name);


/// Recorded values folded into the kernel as constants.
struct Specialization {
  bool Args = false;             ///< scalar (integer, floating) parameters
  bool Dims = false;             ///< blockDim and gridDim
  std::vector<ParamInfo> Layout; ///< the capture's parameter layout
  std::vector<uint8_t> Params;   ///< the recorded parameter buffer
  Dim3 Grid = {1, 1, 1}, Block = {1, 1, 1}; ///< as the launch will run
};

struct CudaCompileOptions {
  std::string SourcePath;
  std::vector<std::string> Flags; ///< -I, -D, -std=... for the front end
  std::string Kernel;             ///< mangled or demangled name
  int ComputeMajor = 9, ComputeMinor = 0;
  CudaToolchain Toolchain = CudaToolchain::Llvm;
  std::string Pipeline; ///< empty: default<O3> (LLVM toolchain only)
  int CodegenOpt = 3;   ///< NVPTX codegen and ptxas -O level, 0-3
  std::optional<uint32_t> MaxRegisters;
  /// Fast, less precise arithmetic: -ffast-math with denormals flushed
  /// (llvm), --use_fast_math (nvrtc, nvcc).
  bool FastMath = false;
  /// nvcc: more options, each a word of its command line
  /// ("--extra-device-vectorization", "-Xptxas", "-dlcm=cg").
  std::vector<std::string> NvccOptions;
  std::optional<LaunchBoundsSpec> Bounds;
  std::optional<Specialization> Specialize;
  std::string CacheDir; ///< empty: no cache
};

/// What the compiler reports: the JSON keys of `r3 compile --format json`.
struct CudaCompileReport {
  std::string Kernel;   ///< the mangled name that was compiled
  std::string Pipeline; ///< the pipeline that ran (the default resolved)
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
std::vector<uint8_t> serializeCompiled(const CudaCompiled &C);
Expected<CudaCompiled> deserializeCompiled(std::span<const uint8_t> In);

} // namespace r3
