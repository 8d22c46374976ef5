// Compiler flags from a compilation database (compile_commands.json, as CMake
// and Bear write it): the entry of a source file, reduced to the flags that
// change what a device-only front end sees (include paths, macros, the
// language standard, forced includes). Output, input, -c, optimization and
// host-code options are dropped: r3 chooses those itself. nvcc's spellings
// (--include-path, --define-macro, -std c++17) become clang's.
#pragma once

#include "support/Error.h"

#include <string>
#include <vector>

namespace r3 {

/// The flags of Source's entry in the database at Database. Relative include
/// paths are made absolute against the entry's "directory". The error says
/// which file has no entry, or where the database is malformed.
Expected<std::vector<std::string>>
flagsFromCompileCommands(const std::string &Database,
                         const std::string &Source);
/// The same from the database's text; Database only names it in messages.
Expected<std::vector<std::string>>
flagsFromCompileCommandsText(const std::string &Text,
                             const std::string &Database,
                             const std::string &Source);

/// Splits a command line like a POSIX shell does for words, single and double
/// quotes and backslash escapes (no expansions).
std::vector<std::string> splitCommandLine(const std::string &Text);

/// The kept flags of one command line (Words[0] is the compiler), relative
/// paths resolved against Directory.
std::vector<std::string> deviceFlags(const std::vector<std::string> &Words,
                                     const std::string &Directory);

} // namespace r3
