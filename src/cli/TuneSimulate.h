// `r3 tune --simulate`: one search strategy against a tuning cache, where
// evaluating a configuration is a lookup (no compile, no replay).
#pragma once

#include "cli/Command.h"

namespace r3::cli {

/// Runs `r3 tune --simulate CACHE [--strategy S] [--budget N] [--seed N]
/// [--batch N] [--format table|json]`; returns the exit status.
int runTuneSimulate(const ParsedArgs &A);

} // namespace r3::cli
