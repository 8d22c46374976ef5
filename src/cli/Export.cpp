// `r3 export`: the best variant of a kernel, for a build system.
#include "cli/Command.h"

namespace r3::cli {

CommandSpec exportCommand() {
  return {"export",
          "write a kernel's best source, diff and settings to a directory",
          "HISTORY.db --kernel NAME -o DIR",
          "",
          {{"--kernel", "", Arity::Value, "NAME", "the kernel to export"},
           {"--output", "-o", Arity::Value, "DIR", "the directory to write"}},
          false,
          nullptr};
}

} // namespace r3::cli
