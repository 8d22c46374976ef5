// `r3 replay`: run recorded launches again in isolation, verify and time them.
#include "cli/Command.h"

#include <utility>

namespace r3::cli {

CommandSpec replayCommand() {
  CommandSpec C{
      "replay",
      "replay recorded launches (or a variant of the kernel), verify and time "
      "them",
      "CAPTURE.h5 [options]",
      "Without --source the recorded module is replayed: the fidelity "
      "baseline.",
      {{"--kernel", "", Arity::Value, "NAME", "the kernel to replay"},
       {"--launch", "", Arity::Value, "N|all",
        "which recorded launch (default all)"},
       {"--source", "", Arity::Value, "FILE",
        "compile the kernel from this source"},
       {"--block", "", Arity::Value, "X[,Y,Z]",
        "launch with another block size"},
       {"--specialize", "", Arity::Value, "args|dims|none",
        "fold recorded values in as constants"},
       {"--repetitions", "", Arity::Value, "N", "timed repetitions"},
       {"--warmup", "", Arity::Value, "N", "untimed warm-up runs"},
       {"--flush-l2", "", Arity::Flag, "",
        "flush the L2 cache before each run"},
       {"--timeout", "", Arity::Value, "SECONDS",
        "kill a run that takes longer"},
       {"--format", "", Arity::Value, "table|json", "output format"}},
      false,
      nullptr};
  return withVariantCompilerOptions(std::move(C));
}

} // namespace r3::cli
