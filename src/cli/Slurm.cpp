// `r3 slurm`: batch scripts that run a campaign under Slurm.
#include "cli/Command.h"

namespace r3::cli {

CommandSpec slurmCommand() {
  return {"slurm",
          "write (and optionally submit) Slurm job scripts for a campaign",
          "CAMPAIGN.toml [options]",
          "",
          {{"--nodes", "", Arity::Value, "N", "nodes to run on"},
           {"--time", "", Arity::Value, "HH:MM:SS", "the job's time limit"},
           {"--submit", "", Arity::Flag, "", "submit with sbatch"},
           {"--output", "-o", Arity::Value, "FILE", "write the script here"}},
          false,
          nullptr};
}

} // namespace r3::cli
