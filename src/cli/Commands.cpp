// The command table: one row per subcommand, built once from the per-command
// files.
#include "cli/Command.h"

#include "support/StringUtil.h"

namespace r3::cli {

std::span<const CommandSpec> commands() {
  static const std::vector<CommandSpec> Table = {
      profileCommand(),   recordCommand(),    replayCommand(), compileCommand(), inspectCommand(),
      hostFlagsCommand(), tuneCommand(),   statusCommand(),  reportCommand(),
      exportCommand(),    runCommand(),    slurmCommand(),   helpCommand(),
  };
  return Table;
}

const CommandSpec *findCommand(std::string_view Name) {
  for (const CommandSpec &C : commands())
    if (C.Name == Name)
      return &C;
  return nullptr;
}

std::string unknownCommandMessage(std::string_view Name) {
  std::vector<std::string> Names;
  for (const CommandSpec &C : commands())
    Names.emplace_back(C.Name);
  std::string Msg = "unknown command '" + std::string(Name) + "'";
  if (auto Best = closestMatch(Name, Names))
    Msg += "; did you mean '" + *Best + "'?";
  return Msg;
}

} // namespace r3::cli
