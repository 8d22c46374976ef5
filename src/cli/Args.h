// Parses a subcommand's arguments against its option table.
#pragma once

#include "cli/Command.h"
#include "support/Error.h"

#include <string>
#include <vector>

namespace r3::cli {

/// Parses Args (the words after the command name). `--name value`,
/// `--name=value`, short aliases, `--` (for commands that run an application)
/// and
/// `--help` are understood; an unknown option is an error that suggests the
/// closest known one.
Expected<ParsedArgs> parseArgs(const CommandSpec &C,
                               const std::vector<std::string> &Args);

/// The value of an option that must be one of Choices, or Default if absent.
Expected<std::string> choiceValue(const ParsedArgs &A, std::string_view Name,
                                  const std::vector<std::string> &Choices,
                                  const std::string &Default);

} // namespace r3::cli
