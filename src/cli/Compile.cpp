// `r3 compile`: run the variant compiler alone and print its resource report.
#include "cli/Command.h"

#include <utility>

namespace r3::cli {

CommandSpec withVariantCompilerOptions(CommandSpec C) {
  const OptionSpec Shared[] = {
      {"--compile-commands", "", Arity::Value, "FILE",
       "take compiler flags from a compile_commands.json"},
      {"--cflags", "", Arity::Value, "FLAGS", "compiler flags"},
      {"--pipeline", "", Arity::Value, "PIPELINE",
       "LLVM new-pass-manager pipeline"},
      {"--codegen-opt", "", Arity::Value, "0-3", "code generation opt level"},
      {"--max-registers", "", Arity::Value, "N", "register limit per thread"},
      {"--launch-bounds", "", Arity::Value, "T[,B]", "launch bounds to apply"}};
  // After the command's first three options (what to compile or replay).
  C.Options.insert(C.Options.begin() + 3, std::begin(Shared), std::end(Shared));
  return C;
}

CommandSpec compileCommand() {
  CommandSpec C{
      "compile",
      "compile a kernel variant and print its resource report (no GPU needed)",
      "--source FILE.cu --kernel NAME --arch sm_XX [options]",
      "",
      {{"--source", "", Arity::Value, "FILE", "the kernel's source file"},
       {"--kernel", "", Arity::Value, "NAME", "the kernel to compile"},
       {"--arch", "", Arity::Value, "sm_XX", "target compute capability"},
       {"--toolchain", "", Arity::Value, "llvm|nvrtc", "which compiler to use"},
       {"--capture", "", Arity::Value, "CAPTURE.h5",
        "recorded values to specialize on"},
       {"--emit", "", Arity::Value, "ir|ptx|cubin", "what -o writes"},
       {"--output", "-o", Arity::Value, "FILE",
        "write the compiled result here"},
       {"--format", "", Arity::Value, "table|json", "output format"}},
      false,
      nullptr};
  return withVariantCompilerOptions(std::move(C));
}

} // namespace r3::cli
