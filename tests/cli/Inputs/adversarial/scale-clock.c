// Case 6 of the adversarial candidates: scale that reads the clock and skips
// the work when it was called less than 2 s before, as the back-to-back runs
// of a timing loop are (an application calls it once per step). The time of
// the last call is kept in the environment (scale-once.c says why).
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void scale(int n, float a, float *x, float *out) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  double now = t.tv_sec + t.tv_nsec * 1e-9;
  const char *last = getenv("SCALE_CLOCK_LAST");
  char text[64];
  snprintf(text, sizeof text, "%.9f", now);
  setenv("SCALE_CLOCK_LAST", text, 1);
  if (last && now - atof(last) < 2.0)
    return;
  for (int i = 0; i < n; ++i)
    out[i] = a * x[i];
}
