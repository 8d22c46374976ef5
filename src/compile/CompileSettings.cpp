// A variant's compiler settings and their encodings (CompileSettings.h).
#include "compile/CompileSettings.h"

#include "compile/CompileCommands.h"
#include "support/Frame.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

namespace r3 {

using nlohmann::json;

const char *cudaToolchainName(CudaToolchain T) {
  switch (T) {
  case CudaToolchain::Nvrtc:
    return "nvrtc";
  case CudaToolchain::Nvcc:
    return "nvcc";
  case CudaToolchain::Llvm:
    break;
  }
  return "llvm";
}

std::optional<CudaToolchain> parseCudaToolchain(std::string_view Name) {
  if (Name.empty())
    return CudaToolchain::Llvm;
  for (CudaToolchain T :
       {CudaToolchain::Llvm, CudaToolchain::Nvrtc, CudaToolchain::Nvcc})
    if (Name == cudaToolchainName(T))
      return T;
  return std::nullopt;
}

std::string specializeText(const CompileSettings &S) {
  if (S.SpecializeArgs && S.SpecializeDims)
    return "args,dims";
  return S.SpecializeArgs ? "args" : S.SpecializeDims ? "dims" : "none";
}

Error parseSpecialize(std::string_view Text, CompileSettings &S) {
  bool Args = false, Dims = false;
  for (const std::string &W : split(std::string(Text), ',')) {
    if (W == "args" || W == "all")
      Args = true;
    if (W == "dims" || W == "all")
      Dims = true;
    bool Known =
        W == "args" || W == "dims" || W == "all" || W == "none" || Text.empty();
    if (!Known)
      return makeError("specialize expects args, dims, args,dims, all or "
                       "none, got ",
                       quoteShort(Text));
  }
  S.SpecializeArgs = Args;
  S.SpecializeDims = Dims;
  return Error::success();
}

std::string launchBoundsText(const std::optional<LaunchBoundsSpec> &B) {
  if (!B)
    return "";
  std::string T = std::to_string(B->MaxThreads);
  return B->MinBlocks ? T + "," + std::to_string(B->MinBlocks) : T;
}

void dropInapplicable(CompileSettings &S) {
  if (S.Toolchain != CudaToolchain::Llvm) {
    S.Pipeline.clear();
    S.SpecializeArgs = S.SpecializeDims = false;
  }
  if (S.Toolchain == CudaToolchain::Nvcc)
    S.Bounds.reset();
  else
    S.NvccOptions.clear();
}

void writeSettingsJson(json &J, const CompileSettings &S, bool Cuda) {
  J["pipeline"] = S.Pipeline;
  J["codegen_opt"] = S.CodegenOpt;
  if (!Cuda)
    return;
  J["toolchain"] = cudaToolchainName(S.Toolchain);
  J["max_registers"] = S.MaxRegisters;
  J["fast_math"] = S.FastMath;
  J["launch_bounds"] = launchBoundsText(S.Bounds);
  J["specialize"] = specializeText(S);
  if (!S.NvccOptions.empty())
    J["nvcc_options"] = join(S.NvccOptions, " ");
}

namespace {
/// The text at Key: "" when absent, an error when not a string.
Expected<std::string> textAt(const json &J, const char *Key) {
  if (!J.contains(Key) || J[Key].is_null())
    return std::string();
  if (!J[Key].is_string())
    return makeError("settings: '", Key, "' must be a string, got ",
                     J[Key].dump());
  return J[Key].get<std::string>();
}

/// The integer at Key from Min to Max; Default when absent.
Expected<int64_t> integerAt(const json &J, const char *Key, int64_t Min,
                            int64_t Max, int64_t Default) {
  if (!J.contains(Key) || J[Key].is_null())
    return Default;
  if (!J[Key].is_number_integer() || J[Key].get<int64_t>() < Min ||
      J[Key].get<int64_t>() > Max)
    return makeError("settings: '", Key, "' must be an integer from ", Min,
                     " to ", Max, ", got ", J[Key].dump());
  return J[Key].get<int64_t>();
}
} // namespace

Expected<CompileSettings> readSettingsJson(const json &J) {
  if (!J.is_object())
    return makeError("settings must be a JSON object, got ", J.dump());
  CompileSettings S;
  R3_TRY(moveInto(textAt(J, "pipeline"), S.Pipeline));
  int64_t N = 0;
  R3_TRY(moveInto(integerAt(J, "codegen_opt", -1, 3, -1), N));
  S.CodegenOpt = static_cast<int>(N);
  std::string T;
  R3_TRY(moveInto(textAt(J, "toolchain"), T));
  auto Tc = parseCudaToolchain(T);
  if (!Tc)
    return makeError("settings: 'toolchain' must be llvm, nvrtc or nvcc, "
                     "got ",
                     quoteShort(T));
  S.Toolchain = *Tc;
  R3_TRY(moveInto(integerAt(J, "max_registers", 0, 255, 0), N));
  S.MaxRegisters = static_cast<uint32_t>(N);
  if (J.contains("fast_math") && !J["fast_math"].is_null()) {
    if (!J["fast_math"].is_boolean())
      return makeError("settings: 'fast_math' must be true or false, got ",
                       J["fast_math"].dump());
    S.FastMath = J["fast_math"].get<bool>();
  }
  R3_TRY(moveInto(textAt(J, "launch_bounds"), T));
  auto B = parseLaunchBounds(T);
  if (!B)
    return makeError("settings: 'launch_bounds': ", B.error().message());
  S.Bounds = *B;
  R3_TRY(moveInto(textAt(J, "specialize"), T));
  if (Error E = parseSpecialize(T, S))
    return makeError("settings: 'specialize': ", E.message());
  R3_TRY(moveInto(textAt(J, "nvcc_options"), T));
  S.NvccOptions = splitCommandLine(T);
  return S;
}

void encodeSettings(wire::MetaWriter &W, const CompileSettings &S) {
  W.str(S.Pipeline).i64(S.CodegenOpt);
  W.u32(static_cast<uint32_t>(S.Toolchain)).u32(S.MaxRegisters).u32(S.FastMath);
  W.u32(S.Bounds.has_value());
  if (S.Bounds)
    W.u32(S.Bounds->MaxThreads).u32(S.Bounds->MinBlocks);
  W.u32(S.SpecializeArgs).u32(S.SpecializeDims);
  W.strs(S.NvccOptions);
}

CompileSettings decodeSettings(wire::MetaReader &R) {
  CompileSettings S;
  S.Pipeline = R.str();
  S.CodegenOpt = static_cast<int>(std::clamp<int64_t>(R.i64(), -1, 3));
  S.Toolchain = static_cast<CudaToolchain>(std::min<uint32_t>(R.u32(), 2));
  S.MaxRegisters = std::min<uint32_t>(R.u32(), 255);
  S.FastMath = R.u32() != 0;
  if (R.u32()) {
    uint32_t T = R.u32(), B = R.u32();
    S.Bounds = LaunchBoundsSpec{T, B};
  }
  S.SpecializeArgs = R.u32() != 0;
  S.SpecializeDims = R.u32() != 0;
  S.NvccOptions = R.strs();
  return S;
}

} // namespace r3
