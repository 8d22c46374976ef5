// Fuzz target: the `--grid-rule` expression parser and evaluator. Any text
// must parse to a rule or an error naming its place, and a parsed rule must
// evaluate to a grid the hardware allows or to an error. The input is the
// rule; after a first "\n@@@@\n" come block and dimension texts.
#include "FuzzInput.h"

#include "replay/LaunchRule.h"

using namespace r3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto [RuleText, Dims] = fuzz::splitAt(fuzz::text(Data, Size), "\n@@@@\n");
  LaunchValues V;
  V.RecordedGrid = {40, 3, 1};
  V.RecordedBlock = {256, 1, 1};
  V.Block = {128, 2, 1};
  V.Params = {{"arg0", 10000}, {"arg1", -3}, {"n", 4096}};
  if (!Dims.empty()) {
    auto Block = parseDim3(std::string(Dims), "block");
    if (!Block)
      return 0;
    V.Block = *Block;
  }
  auto Rule = parseGridRule(std::string(RuleText));
  if (!Rule) {
    (void)Rule.error().message();
    return 0;
  }
  auto Grid = applyGridRule(*Rule, V);
  if (Grid && ((*Grid)[0] == 0 || (*Grid)[1] == 0 || (*Grid)[2] == 0))
    __builtin_trap(); // a grid dimension is a positive integer
  return 0;
}
