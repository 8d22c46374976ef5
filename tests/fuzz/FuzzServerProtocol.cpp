// Fuzz target: the replay server protocol's decoders. The client reads what a
// server that may have been corrupted by a candidate wrote, and the server
// reads a client's frames: any bytes must decode or give an error. The first
// byte picks the decoder; 7 reads whole frames from a stream.
#include "FuzzInput.h"

#include "replay/ServerProtocol.h"

#include <unistd.h>

using namespace r3;

namespace {
void readFrames(std::span<const uint8_t> In) {
  int Fd = fuzz::memoryFd(In);
  for (int I = 0; I < 8; ++I) {
    ServerFrameData F;
    auto S = readFrame(Fd, std::nullopt, F);
    if (!S || *S != ReadStatus::Frame)
      break;
    (void)serverFrameName(F.Kind);
  }
  ::close(Fd);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  std::span<const uint8_t> Meta(Data + 1, Size - 1);
  switch (Data[0] % 8) {
  case 0:
    (void)decodeOpen(Meta);
    break;
  case 1:
    (void)decodeOpened(Meta);
    break;
  case 2:
    (void)decodeRunning(Meta);
    break;
  case 3:
    (void)decodeError(Meta);
    break;
  case 4:
    (void)decodeCandidate(Meta, std::vector<uint8_t>(Meta.begin(), Meta.end()));
    break;
  case 5:
    (void)decodeResult(Meta);
    break;
  case 6: { // what decodes must decode again once re-encoded
    auto C = decodeCandidate(Meta, {});
    if (C && !decodeCandidate(encodeCandidate(*C).data(), {}))
      __builtin_trap();
    break;
  }
  default:
    readFrames(Meta);
  }
  return 0;
}
