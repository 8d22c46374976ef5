// Fuzz target: the capture reader. A capture may come from another machine
// or another version of r3, so any file must open to a capture or an error,
// and every read of an opened capture must stay inside what it declares.
#include "FuzzInput.h"

#include "capture/CaptureReader.h"

#include <algorithm>

using namespace r3;

namespace {
/// Reads a little of every region before and after, as replay does first.
void readRegions(const CaptureReader &R) {
  uint8_t Buf[64];
  for (uint32_t L = 0; L < R.launches().size(); ++L)
    for (uint32_t I = 0; I < R.launches()[L].Regions.size(); ++I)
      for (Phase P : {Phase::Pre, Phase::Post}) {
        uint64_t Size = R.launches()[L].Regions[I].Size;
        std::span<uint8_t> Out(Buf, std::min<uint64_t>(Size, sizeof(Buf)));
        (void)R.readRegion(L, I, P, 0, Out);
      }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Path = fuzz::writeScratch(fuzz::bytes(Data, Size), ".h5");
  auto R = CaptureReader::open(Path);
  if (!R) {
    (void)R.error().message();
    return 0;
  }
  for (uint32_t M = 0; M < (*R)->modules().size(); ++M)
    (void)(*R)->readModule(M);
  readRegions(**R);
  (void)(*R)->verifyData();
  return 0;
}
