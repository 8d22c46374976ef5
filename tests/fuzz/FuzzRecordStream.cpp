// Fuzz target: the record stream decoder, the parent side of `r3 record`. The
// stream comes from inside someone else's process, so any bytes must become
// a capture or an error, never a crash of r3 record. The first byte picks the
// receiver: a recording (stream → capture file) or list mode.
#include "FuzzInput.h"

#include "record/CaptureSink.h"

#include <unistd.h>

using namespace r3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  bool ListMode = Data[0] & 1;
  int Fd = fuzz::memoryFd(fuzz::bytes(Data + 1, Size - 1));
  if (ListMode) {
    (void)receiveKernelList(Fd);
  } else {
    CaptureHeader Base;
    Base.CommandLine = {"./app"};
    (void)receiveCapture(Fd, fuzz::scratchPath(".h5"), Base);
  }
  ::close(Fd);
  return 0;
}
