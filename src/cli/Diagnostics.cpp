// Error and warning printing for the CLI (the only layer that prints).
#include "cli/Diagnostics.h"

#include "cli/Command.h"

#include <cstdio>

namespace r3::cli {

void printError(const std::string &Message) {
  std::fprintf(stderr, "r3: error: %s\n", Message.c_str());
}

void printWarning(const std::string &Message) {
  std::fprintf(stderr, "r3: warning: %s\n", Message.c_str());
}

int fail(const Error &E) {
  printError(E.message());
  return ExitFailure;
}

int usageError(const std::string &Message, std::string_view Command) {
  printError(Message);
  if (Command.empty())
    std::fprintf(stderr, "run 'r3 help' for the list of commands\n");
  else
    std::fprintf(stderr, "run 'r3 help %.*s' for its usage\n",
                 static_cast<int>(Command.size()), Command.data());
  return ExitUsage;
}

} // namespace r3::cli
