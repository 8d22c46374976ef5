// How the CLI speaks to the user: `r3: error: ...` on stderr, in one style.
#pragma once

#include "support/Error.h"

#include <string>

namespace r3::cli {

/// Prints "r3: error: Message" to stderr.
void printError(const std::string &Message);
/// Prints "r3: warning: Message" to stderr.
void printWarning(const std::string &Message);
/// Prints the error and returns ExitFailure.
int fail(const Error &E);
/// Prints a usage error with a pointer to the command's help; returns
/// ExitUsage.
int usageError(const std::string &Message, std::string_view Command);

} // namespace r3::cli
