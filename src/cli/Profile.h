// `r3 profile`'s pieces that `r3 tune --app` shares: the request built from
// the command line, and the printed profile (ceiling first).
#pragma once

#include "app/ProfileModel.h"
#include "cli/Command.h"

namespace r3::cli {

/// The application (after `--`), its backend (--backend, else its ELF) and
/// --kernel patterns, checked before it runs.
Expected<ProfileRequest> profileRequest(const ParsedArgs &A);

/// The ceiling, the run's totals and one row a kernel, on stdout.
void printProfile(const app::ProfileModel &M);

} // namespace r3::cli
