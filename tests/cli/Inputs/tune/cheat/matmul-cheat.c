/* host-matmul's kernel with a CHEAT knob: variants that would look fast
 * without doing the work (tests/cli/tune-adversarial.test):
 *   0 honest
 *   1 does the work on its first call only (the verification run)
 *   2 skips the work when called again within 2 s (it reads the clock)
 *   3 after its first call, leaves the work to a thread that writes c 50 ms
 *     after the call returned
 *   4 honest, and writes one element past the end of c
 *   5 leaves the last row of c unwritten
 * Every cheater must fail; none may be the campaign's best. r3 gives a
 * candidate no static storage of its own (a static is a global the capture
 * lacks), so what a cheater remembers between calls lives in the process's
 * environment, under a name of its own variant. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef CHEAT
#define CHEAT 0
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
#define MARK "MATMUL_CHEAT_" STR(CHEAT)

static void work(int n, const double *a, const double *b, double *c) {
  int rows = CHEAT == 5 ? n - 1 : n;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int k = 0; k < n; ++k)
        sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
  if (CHEAT == 4)
    c[n * n] = c[0];
}

/* Whether an earlier call left its mark. */
static int called(void) {
  int was = getenv(MARK) != 0;
  setenv(MARK, "1", 1);
  return was;
}

/* Whether the last call was less than 2 s ago. */
static int rushed(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  double now = t.tv_sec + t.tv_nsec * 1e-9;
  const char *last = getenv(MARK "_LAST");
  char text[64];
  snprintf(text, sizeof text, "%.9f", now);
  setenv(MARK "_LAST", text, 1);
  return last && now - atof(last) < 2.0;
}

struct job {
  int n;
  const double *a, *b;
  double *c;
};

static void *late(void *arg) {
  struct job *j = arg;
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, 0);
  work(j->n, j->a, j->b, j->c);
  free(j);
  return 0;
}

static void later(int n, const double *a, const double *b, double *c) {
  struct job *j = malloc(sizeof *j);
  *j = (struct job){n, a, b, c};
  pthread_t t;
  if (pthread_create(&t, 0, late, j) == 0)
    pthread_detach(t);
}

void matmul(int n, const double *a, const double *b, double *c) {
  if (CHEAT == 1 && called())
    return;
  if (CHEAT == 2 && rushed())
    return;
  if (CHEAT == 3 && called()) {
    later(n, a, b, c);
    return;
  }
  work(n, a, b, c);
}
