// The options of the CUDA variant compiler that `r3 compile` and `r3 replay`
// of a CUDA capture share, parsed once for both: codegen level, register
// limit, pipeline, toolchain, launch bounds, fast math, nvcc options,
// specialization (into compile/CompileSettings.h's one type), and flags.
// settingsWords writes the same options back: the command-line encoding of
// the settings has this one home.
#pragma once

#include "cli/Args.h"
#include "compile/CompileSettings.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace r3::cli {

/// The value of an integer option from Min to Max; none when absent.
Expected<std::optional<uint32_t>> boundedOption(const ParsedArgs &A,
                                                std::string_view Name,
                                                uint64_t Min, uint64_t Max);

/// --codegen-opt, --max-registers, --pipeline (its first value),
/// --toolchain, --launch-bounds, --fast-math, --nvcc-options and
/// --specialize (Specialize when the option is absent) into S.
Error parseCompilerSettings(const ParsedArgs &A, CompileSettings &S,
                            const std::string &Specialize = "none");

/// The options that parseCompilerSettings reads S back from (the defaults
/// omitted), as words of a command line.
std::vector<std::string> settingsWords(const CompileSettings &S);

/// The front end's flags of Source: --compile-commands (its entry), then
/// --cflags.
Expected<std::vector<std::string>>
parseCompilerFlags(const ParsedArgs &A, const std::string &Source);

} // namespace r3::cli
