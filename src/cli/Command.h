// The command table of the r3 binary: every subcommand is one row, with its
// options, so that dispatch, `--help`, `r3 help CMD` and "did you mean" all
// come from one place (as llvm-cov's and ninja's tool tables do).
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace r3::cli {

/// The exit codes of r3, for scripts and job schedulers.
enum ExitCode : int {
  ExitSuccess = 0,
  ExitFailure = 1,     ///< the command ran and failed
  ExitUsage = 2,       ///< the command line is wrong
  ExitInterrupted = 75 ///< stopped by a signal after checkpointing: resume it
};

/// Whether an option takes a value.
enum class Arity { Flag, Value };

struct OptionSpec {
  std::string_view Name;  ///< "--format"
  std::string_view Short; ///< "-o", or empty
  Arity Takes = Arity::Flag;
  std::string_view Metavar; ///< "table|json", for the help text
  std::string_view Help;
};

struct ParsedArgs;

struct CommandSpec {
  std::string_view Name;
  std::string_view Summary;  ///< one line, for `r3 help`
  std::string_view Synopsis; ///< "CAPTURE.h5 [options]"
  std::string_view Description;
  std::vector<OptionSpec> Options;
  /// Whether `--` ends r3's options and the rest is an application command
  /// line.
  bool TakesCommandLine = false;
  int (*Run)(const ParsedArgs &Args) = nullptr; ///< null: not built yet
};

/// A command line parsed against a CommandSpec.
struct ParsedArgs {
  const CommandSpec *Command = nullptr;
  std::vector<std::string> Positional;
  std::map<std::string, std::vector<std::string>, std::less<>> Values;
  std::vector<std::string> Trailing; ///< after `--`

  bool has(std::string_view Name) const { return Values.count(Name) != 0; }
  /// The last value given for an option, if any.
  std::optional<std::string> value(std::string_view Name) const;
};

/// Every command, in the order `r3 help` lists them.
std::span<const CommandSpec> commands();
const CommandSpec *findCommand(std::string_view Name);
/// "unknown command 'X'; did you mean 'Y'?"
std::string unknownCommandMessage(std::string_view Name);

/// C with the variant compiler's options (shared by `compile` and `replay`)
/// inserted after its first three.
CommandSpec withVariantCompilerOptions(CommandSpec C);
/// The `--help` / `-h` option every command accepts.
const OptionSpec &helpOption();

// Row contents, one file per command.
CommandSpec profileCommand();
CommandSpec recordCommand();
CommandSpec replayCommand();
CommandSpec compileCommand();
CommandSpec inspectCommand();
CommandSpec hostFlagsCommand();
CommandSpec tuneCommand();
CommandSpec statusCommand();
CommandSpec reportCommand();
CommandSpec exportCommand();
CommandSpec runCommand();
CommandSpec slurmCommand();
CommandSpec helpCommand();

/// Prints the help of a command to stdout.
void printCommandHelp(const CommandSpec &C);
/// Prints the list of commands to the given stream.
void printOverview(std::FILE *To);

} // namespace r3::cli
