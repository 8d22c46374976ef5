// The variant compiler's shared options (VariantOptions.h).
#include "cli/VariantOptions.h"

#include "compile/CompileCommands.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"

namespace r3::cli {

Expected<std::optional<uint32_t>> boundedOption(const ParsedArgs &A,
                                                std::string_view Name,
                                                uint64_t Min, uint64_t Max) {
  auto V = A.value(Name);
  if (!V)
    return std::optional<uint32_t>();
  auto N = parseUnsigned(*V);
  if (!N || *N < Min || *N > Max)
    return makeError("option '", Name, "' expects an integer from ", Min,
                     " to ", Max, ", got '", *V, "'");
  return std::optional<uint32_t>(static_cast<uint32_t>(*N));
}

namespace {
Error parseBounds(const ParsedArgs &A, CudaCompileOptions &O) {
  auto V = A.value("--launch-bounds");
  if (!V)
    return Error::success();
  auto B = parseLaunchBounds(*V);
  if (!B || !*B)
    return makeError("option '--launch-bounds' expects THREADS[,BLOCKS] with "
                     "THREADS from 1 to 1024, got '",
                     *V, "'");
  O.Bounds = *B;
  return Error::success();
}
} // namespace

Error parseCompilerSettings(const ParsedArgs &A, CudaCompileOptions &O) {
  std::optional<uint32_t> Opt, Regs;
  R3_TRY(moveInto(boundedOption(A, "--codegen-opt", 0, 3), Opt));
  if (auto V = A.value("--codegen-opt"); V && !Opt)
    return makeError("option '--codegen-opt' expects 0, 1, 2 or 3");
  if (Opt)
    O.CodegenOpt = static_cast<int>(*Opt);
  R3_TRY(moveInto(boundedOption(A, "--max-registers", 16, 255), Regs));
  O.MaxRegisters = Regs;
  O.Pipeline = A.value("--pipeline").value_or("");
  std::string Toolchain;
  R3_TRY(moveInto(
      choiceValue(A, "--toolchain", {"llvm", "nvrtc", "nvcc"}, "llvm"),
      Toolchain));
  O.Toolchain = *parseCudaToolchain(Toolchain);
  O.FastMath = A.has("--fast-math");
  O.NvccOptions = splitCommandLine(A.value("--nvcc-options").value_or(""));
  if (!O.NvccOptions.empty() && O.Toolchain != CudaToolchain::Nvcc)
    return Error::make("option '--nvcc-options' needs --toolchain nvcc");
  return parseBounds(A, O);
}

Error parseCompilerFlags(const ParsedArgs &A, CudaCompileOptions &O) {
  if (auto DB = A.value("--compile-commands")) {
    if (!pathExists(*DB))
      return makeError("option '--compile-commands': no such file '", *DB, "'");
    R3_TRY(moveInto(flagsFromCompileCommands(*DB, O.SourcePath), O.Flags));
  }
  for (std::string &F : splitCommandLine(A.value("--cflags").value_or("")))
    O.Flags.push_back(std::move(F));
  return Error::success();
}

Error parseSpecializeWords(const std::string &Text, bool &Args, bool &Dims) {
  for (const std::string &W : split(Text, ',')) {
    if (W == "args" || W == "all")
      Args = true;
    if (W == "dims" || W == "all")
      Dims = true;
    if (W != "args" && W != "dims" && W != "all" && W != "none")
      return makeError("option '--specialize' expects args, dims, args,dims "
                       "or none, got '",
                       Text, "'");
  }
  return Error::success();
}

} // namespace r3::cli
