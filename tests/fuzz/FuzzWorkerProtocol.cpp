// Fuzz target: the campaign's worker protocol. Messages cross processes and,
// under MPI, nodes: any bytes must decode to a message or give an error. The
// first byte picks whole-message decoding or reading messages from a stream.
#include "FuzzInput.h"

#include "campaign/WorkerProtocol.h"

#include <unistd.h>

using namespace r3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  std::span<const uint8_t> In(Data + 1, Size - 1);
  if (Data[0] & 1) {
    (void)decodeMessage(In);
    return 0;
  }
  int Fd = fuzz::memoryFd(In);
  for (int I = 0; I < 8; ++I) {
    auto M = readMessage(Fd);
    if (!M || !*M)
      break;
  }
  ::close(Fd);
  return 0;
}
