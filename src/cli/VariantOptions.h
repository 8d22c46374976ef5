// The options of the CUDA variant compiler that `r3 compile` and `r3 replay`
// of a CUDA capture share, parsed once for both: codegen level, register
// limit, pipeline, toolchain, launch bounds, flags, specialization.
#pragma once

#include "cli/Args.h"
#include "compile/cuda/CudaCompiler.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace r3::cli {

/// The value of an integer option from Min to Max; none when absent.
Expected<std::optional<uint32_t>> boundedOption(const ParsedArgs &A,
                                                std::string_view Name,
                                                uint64_t Min, uint64_t Max);

/// --codegen-opt, --max-registers, --pipeline (its first value),
/// --toolchain, --launch-bounds and --fast-math into O.
Error parseCompilerSettings(const ParsedArgs &A, CudaCompileOptions &O);

/// The front end's flags into O.Flags: --compile-commands (the entry of
/// O.SourcePath), then --cflags.
Error parseCompilerFlags(const ParsedArgs &A, CudaCompileOptions &O);

/// "args", "dims", "args,dims", "all" or "none" (--specialize).
Error parseSpecializeWords(const std::string &Text, bool &Args, bool &Dims);

} // namespace r3::cli
