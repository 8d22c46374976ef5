// `r3 help [COMMAND]`, `r3 COMMAND --help` and the overview printed by bare
// `r3`.
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "r3/Version.h"

#include <cstdio>

namespace r3::cli {

namespace {
void printOption(const OptionSpec &O) {
  std::string Left = "  ";
  if (!O.Short.empty())
    Left += std::string(O.Short) + ", ";
  Left += O.Name;
  if (O.Takes == Arity::Value)
    Left += " " + std::string(O.Metavar);
  if (Left.size() < 30)
    std::printf("%-30s %.*s\n", Left.c_str(), static_cast<int>(O.Help.size()),
                O.Help.data());
  else
    std::printf("%s\n%-30s %.*s\n", Left.c_str(), "",
                static_cast<int>(O.Help.size()), O.Help.data());
}

int runHelp(const ParsedArgs &A) {
  if (A.Positional.empty()) {
    printOverview(stdout);
    return ExitSuccess;
  }
  const std::string &Name = A.Positional.front();
  if (const CommandSpec *C = findCommand(Name)) {
    printCommandHelp(*C);
    return ExitSuccess;
  }
  return usageError(unknownCommandMessage(Name), "");
}
} // namespace

void printCommandHelp(const CommandSpec &C) {
  std::printf("usage: r3 %.*s %.*s\n\n%.*s\n", static_cast<int>(C.Name.size()),
              C.Name.data(), static_cast<int>(C.Synopsis.size()),
              C.Synopsis.data(), static_cast<int>(C.Summary.size()),
              C.Summary.data());
  if (!C.Description.empty())
    std::printf("\n%.*s\n", static_cast<int>(C.Description.size()),
                C.Description.data());
  std::printf("\noptions:\n");
  for (const OptionSpec &O : C.Options)
    printOption(O);
  printOption(helpOption());
  if (!C.Run)
    std::printf("\nnote: this command is not built yet in r3 %s\n", Version);
}

void printOverview(std::FILE *To) {
  std::fprintf(To, "usage: r3 COMMAND [options]\n\n"
                   "r3 records GPU and CPU kernel launches from unmodified "
                   "applications,\nremixes the kernels and replays every "
                   "candidate in isolation.\n\ncommands:\n");
  for (const CommandSpec &C : commands())
    std::fprintf(To, "  %-12.*s %.*s\n", static_cast<int>(C.Name.size()),
                 C.Name.data(), static_cast<int>(C.Summary.size()),
                 C.Summary.data());
  std::fprintf(To,
               "\nrun 'r3 help COMMAND' or 'r3 COMMAND --help' for a command's "
               "options; 'r3 --version' for the version.\n"
               "exit codes: 0 success, 1 error, 2 usage, 75 interrupted and "
               "checkpointed (resume it)\n");
}

CommandSpec helpCommand() {
  return {"help",      "show the commands, or the options of one",
          "[COMMAND]", "",
          {},          false,
          runHelp};
}

} // namespace r3::cli
