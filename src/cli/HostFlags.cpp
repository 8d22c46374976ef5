// `r3 host-flags`: compiler and linker flags that instrument CPU kernels.
#include "cli/Command.h"

namespace r3::cli {

CommandSpec hostFlagsCommand() {
  return {
      "host-flags",
      "print clang flags that instrument CPU kernels for recording",
      "--kernel REGEX | --libs",
      "Use like pkg-config: clang-19 $(r3 host-flags --kernel 'REGEX') -c "
      "app.c",
      {{"--kernel", "", Arity::Value, "REGEX", "the functions to instrument"},
       {"--libs", "", Arity::Flag, "", "print the link flags instead"}},
      false,
      nullptr};
}

} // namespace r3::cli
