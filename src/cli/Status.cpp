// `r3 status`: the state of a campaign, from its database, while it runs.
#include "cli/Command.h"

namespace r3::cli {

CommandSpec statusCommand() {
  return {"status",
          "show the progress of a campaign from its database",
          "HISTORY.db",
          "",
          {{"--format", "", Arity::Value, "table|json", "output format"}},
          false,
          nullptr};
}

} // namespace r3::cli
