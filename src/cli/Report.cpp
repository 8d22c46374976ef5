// `r3 report`: the results of a campaign.
#include "cli/Command.h"

namespace r3::cli {

CommandSpec reportCommand() {
  return {"report",
          "report a campaign's baselines, best variants and failures",
          "HISTORY.db [options]",
          "",
          {{"--format", "", Arity::Value, "table|json|html", "output format"},
           {"--output", "-o", Arity::Value, "FILE", "write the report here"}},
          false,
          nullptr};
}

} // namespace r3::cli
