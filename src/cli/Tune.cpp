// `r3 tune`: run (or resume) a tuning campaign.
#include "cli/Command.h"

namespace r3::cli {

CommandSpec tuneCommand() {
  return {
      "tune",
      "run or resume a tuning campaign described by a campaign file",
      "CAMPAIGN.toml [options]",
      "A campaign whose database exists is resumed. SIGINT, SIGTERM and "
      "SIGUSR1\n"
      "checkpoint and exit 75.",
      {{"--dry-run", "", Arity::Flag, "",
        "validate and print the search space sizes"},
       {"--resume", "", Arity::Flag, "", "resume the campaign in its database"},
       {"--workers", "", Arity::Value, "N", "worker processes on this node"},
       {"--simulate", "", Arity::Value, "CACHE.json",
        "evaluate by lookup in a tuning cache file"},
       {"--seed", "", Arity::Value, "N", "random seed"}},
      false,
      nullptr};
}

} // namespace r3::cli
