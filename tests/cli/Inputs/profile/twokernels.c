/* An application with two kernels of clearly different weight, for r3 profile
 * and r3 tune --app: `heavy` (a small matrix multiply, about 50 times the
 * work of a launch of `light`) and `light` (a vector update), launched in a
 * loop of steps the way a solver's time steps are.
 *
 *   ./twokernels [STEPS] [--fail]    (STEPS defaults to 4)
 *   --fail: print a few lines and exit 3 after the first step */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 48

void heavy(int n, const double *a, const double *b, double *c) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int k = 0; k < n; ++k)
        sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
}

void light(int n, double alpha, const double *x, double *y) {
  for (int i = 0; i < n; ++i)
    y[i] = alpha * x[i] + y[i];
}

int main(int argc, char **argv) {
  int steps = 4, fail = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--fail") == 0)
      fail = 1;
    else
      steps = atoi(argv[i]);
  }
  double *a = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N);
  double *c = malloc(sizeof(double) * N * N);
  for (int i = 0; i < N * N; ++i) {
    a[i] = (i % 7) * 0.25 - 0.5;
    b[i] = (i % 5) * 0.5 - 1.0;
  }
  double check = 0;
  for (int s = 0; s < steps; ++s) {
    heavy(N, a, b, c);
    light(N * N, 0.5, c, a);
    check += c[s % (N * N)];
    if (fail) {
      printf("twokernels: step %d of %d\n", s, steps);
      printf("twokernels: the residual diverged\n");
      fprintf(stderr, "twokernels: giving up\n");
      return 3;
    }
  }
  printf("twokernels steps=%d checksum=%.6f\n", steps, check);
  free(a);
  free(b);
  free(c);
  return 0;
}
