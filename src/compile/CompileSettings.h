// The compiler settings of one variant: the one home of what the compiler
// level varies. A campaign's compiler point becomes one (CampaignSpace.cpp),
// the worker protocol carries it to the compile threads, the history stores
// it as JSON, `r3 export` rebuilds the best from that JSON, and `r3 compile`
// and `r3 replay --source` fill it from their options; the CUDA variant
// compiler takes it inside its options (cuda/CudaCompiler.h), built from a
// capture's launch by cudaCompileOptions (cuda/VariantOptions.h). The JSON
// and frame encodings are written and read here only; the command line's,
// in cli/VariantOptions.h.
//
// Free of LLVM and CUDA: the campaign file's reader and the protocols use it
// on machines without the toolkit.
#pragma once

#include "compile/cuda/LaunchBounds.h"
#include "support/Error.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace r3 {

namespace wire {
class MetaWriter;
class MetaReader;
} // namespace wire

/// Who compiles a CUDA variant: clang-19 and LLVM (the pass-order search),
/// NVRTC, or nvcc with the application's own flags (compiler tuning from
/// the application's own code generator).
enum class CudaToolchain { Llvm, Nvrtc, Nvcc };

/// "llvm", "nvrtc", "nvcc"; parse gives none for another word ("" is llvm).
const char *cudaToolchainName(CudaToolchain T);
std::optional<CudaToolchain> parseCudaToolchain(std::string_view Name);

struct CompileSettings {
  // --- both backends ---
  std::string Pipeline; ///< new-pass-manager text; empty: the default
  int CodegenOpt = -1;  ///< 0-3; -1: the backend's default
  // --- CUDA ---
  CudaToolchain Toolchain = CudaToolchain::Llvm;
  uint32_t MaxRegisters = 0; ///< 0: no limit
  /// Fast, less precise arithmetic: -ffast-math with denormals flushed
  /// (llvm), --use_fast_math (nvrtc, nvcc).
  bool FastMath = false;
  std::optional<LaunchBoundsSpec> Bounds;
  /// Fold the recorded launch's scalar parameters (Args) or its grid and
  /// block (Dims) into the kernel as constants (llvm only).
  bool SpecializeArgs = false, SpecializeDims = false;
  /// nvcc: more options, each a word of its command line
  /// ("--extra-device-vectorization", "-Xptxas", "-dlcm=cg").
  std::vector<std::string> NvccOptions;

  bool specialized() const { return SpecializeArgs || SpecializeDims; }
  bool operator==(const CompileSettings &) const = default;
};

/// "none", "args", "dims" or "args,dims".
std::string specializeText(const CompileSettings &S);
/// "args", "dims", "args,dims", "all" or "none" (or "": none) into S; the
/// error says what was expected and got.
Error parseSpecialize(std::string_view Text, CompileSettings &S);
/// "T" or "T,B"; "" for none.
std::string launchBoundsText(const std::optional<LaunchBoundsSpec> &B);

/// Clears what S's toolchain cannot apply, so that settings differing only
/// there are one candidate: NVRTC and nvcc run no LLVM pipeline and
/// specialize nothing, nvcc takes no launch bounds, and only nvcc takes
/// nvcc options.
void dropInapplicable(CompileSettings &S);

/// The settings as the history's and an export's JSON keys, set on J (an
/// object): "pipeline" and "codegen_opt", and with Cuda "toolchain",
/// "max_registers", "fast_math", "launch_bounds", "specialize" and, when
/// there are any, "nvcc_options" (one string, words separated by spaces).
void writeSettingsJson(nlohmann::json &J, const CompileSettings &S, bool Cuda);
/// The settings from such JSON. Absent keys keep their defaults; so do the
/// empty texts older histories wrote for the defaults. A key of the wrong
/// type or value is an error that names it.
Expected<CompileSettings> readSettingsJson(const nlohmann::json &J);

/// The settings in frames of r3's codec (support/Frame.h), and back; a
/// frame whose values are out of range is an error of decodeSettings's
/// caller's MetaReader::finish, never a crash.
void encodeSettings(wire::MetaWriter &W, const CompileSettings &S);
CompileSettings decodeSettings(wire::MetaReader &R);

} // namespace r3
