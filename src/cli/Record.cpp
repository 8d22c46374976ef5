// `r3 record`: run an application and record the inputs of chosen kernel
// launches.
#include "cli/Command.h"

namespace r3::cli {

CommandSpec recordCommand() {
  return {
      "record",
      "run an application and record chosen kernel launches into a capture",
      "[--kernel REGEX]... [--launch N | --launches A-B] -o OUT.h5 -- APP "
      "[ARGS...]",
      "The application runs unmodified; its output and exit status pass "
      "through.\n"
      "In -o, %p is replaced by the process id and %r by the MPI rank.",
      {{"--kernel", "-k", Arity::Value, "REGEX",
        "record kernels whose mangled or demangled name matches (repeatable)"},
       {"--launch", "", Arity::Value, "N", "record the N-th launch (0-based)"},
       {"--launches", "", Arity::Value, "A-B", "record launches A to B"},
       {"--max-launches", "", Arity::Value, "K", "record at most K launches"},
       {"--skip", "", Arity::Value, "K", "skip the first K matching launches"},
       {"--list", "", Arity::Flag, "",
        "list the kernels launched; record nothing"},
       {"--backend", "", Arity::Value, "cuda|host",
        "which backend to record with"},
       {"--output", "-o", Arity::Value, "OUT.h5", "the capture file to write"}},
      true,
      nullptr};
}

} // namespace r3::cli
