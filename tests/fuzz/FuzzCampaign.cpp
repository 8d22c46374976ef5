// Fuzz target: the campaign file reader. Any text must parse to a validated
// campaign or to the list of its mistakes; the spaces of a valid campaign
// must be describable.
#include "FuzzInput.h"

#include "campaign/Campaign.h"

using namespace r3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(fuzz::text(Data, Size));
  // Relative captures resolve against a folder that holds none of them.
  std::string Path = fuzz::scratchPath("-campaign/campaign.toml");
  auto C = parseCampaign(Text, Path, /*MissingCapturesOk=*/true);
  if (!C) {
    (void)C.error().message();
    return 0;
  }
  (void)describeSpaces(*C);
  search::Space Inner = innerSpace(*C);
  (void)launchSpace(*C);
  for (const KernelSpec &K : C->Kernels)
    (void)sourceSpace(K);
  search::Rng Random(1);
  if (Inner.size() > 0) {
    search::Point P = Inner.random(Random);
    (void)Inner.describe(P);
    (void)innerSettings(*C, Inner, P);
  }
  return 0;
}
