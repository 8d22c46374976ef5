// Fuzz target: the Kernel Tuner cache loader (JSON text; gzip is zlib's). A
// cache is someone else's file: any text must become a cache whose every
// entry can be looked up, or an error.
#include "FuzzInput.h"

#include "search/TuningCache.h"

using namespace r3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto C = search::parseTuningCache(std::string(fuzz::text(Data, Size)),
                                    "cache.json");
  if (!C) {
    (void)C.error().message();
    return 0;
  }
  (void)C->failures();
  (void)C->combinations();
  for (const search::Point &P : C->SearchSpace.Allowed)
    if (!C->lookup(P))
      __builtin_trap(); // every entry of the cache must be found
  if (!C->SearchSpace.Allowed.empty())
    (void)C->SearchSpace.describe(C->SearchSpace.Allowed[C->OptimumIndex]);
  return 0;
}
