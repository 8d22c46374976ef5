// Case 5 of the adversarial candidates: scale that does the work itself on
// its first call (the verification run) and afterwards hands it to a
// detached thread that writes the outputs 50 ms after the call returned,
// outside the timed interval. The call counter lives in the environment
// (scale-once.c says why); the thread's job on the heap.
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct job {
  int n;
  float a;
  float *x, *out;
};

static void *late(void *arg) {
  struct job *j = arg;
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, 0);
  for (int i = 0; i < j->n; ++i)
    j->out[i] = j->a * j->x[i];
  free(j);
  return 0;
}

void scale(int n, float a, float *x, float *out) {
  if (!getenv("SCALE_THREAD_CALLED")) {
    setenv("SCALE_THREAD_CALLED", "1", 1);
    for (int i = 0; i < n; ++i)
      out[i] = a * x[i];
    return;
  }
  struct job *j = malloc(sizeof *j);
  *j = (struct job){n, a, x, out};
  pthread_t t;
  if (pthread_create(&t, 0, late, j) == 0)
    pthread_detach(t);
}
