// Case 3 of the adversarial candidates (tests/cli/replay-adversarial.test):
// scale that does the work on its first call only. The first call is the
// verification run; every later call (warm-ups, timed runs) returns at once
// and leaves the outputs as the restore left them. r3 gives a candidate no
// static storage of its own (a static is a global the capture lacks: a
// compile error), so the call counter lives in the process's environment.
#include <stdlib.h>

void scale(int n, float a, float *x, float *out) {
  if (getenv("SCALE_ONCE_CALLED"))
    return;
  setenv("SCALE_ONCE_CALLED", "1", 1);
  for (int i = 0; i < n; ++i)
    out[i] = a * x[i];
}
