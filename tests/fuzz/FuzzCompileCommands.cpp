// Fuzz target: reading compile_commands.json. A compilation database is
// written by other tools: any text must give the entry's device flags or an
// error. Shell-style command splitting runs on the whole input too.
#include "FuzzInput.h"

#include "compile/CompileCommands.h"

using namespace r3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(fuzz::text(Data, Size));
  (void)deviceFlags(splitCommandLine(Text), "/src");
  (void)flagsFromCompileCommandsText(Text, "compile_commands.json",
                                     "/src/kernel.cu");
  return 0;
}
