/* host-matmul: a dense matrix multiply C = A * B, the loop nest every compiler
 * course tunes. The kernel is the function `matmul`; main builds inputs that
 * are the same on every run, calls the kernel, prints a checksum, and with
 * `--dump DIR` writes what it computed to DIR/C.bin so that a replay can be
 * compared with the application itself.
 *
 *   ./matmul [N] [--dump DIR]        (N defaults to 96)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void matmul(int n, const double *a, const double *b, double *c) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int k = 0; k < n; ++k)
        sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
}

static double *filled(int n, unsigned seed) {
  double *m = malloc(sizeof(double) * (size_t)n * (size_t)n);
  if (!m) {
    fprintf(stderr, "matmul: out of memory\n");
    exit(1);
  }
  for (int i = 0; i < n * n; ++i) {
    seed = seed * 1103515245u + 12345u;
    m[i] = (double)(seed >> 16 & 0x7fff) / 32768.0 - 0.5;
  }
  return m;
}

static int dump(const char *dir, const char *name, const void *p, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "matmul: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int n = 96;
  const char *dumpDir = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
      dumpDir = argv[++i];
    else if ((n = atoi(argv[i])) <= 0) {
      fprintf(stderr, "usage: matmul [N] [--dump DIR]\n");
      return 2;
    }
  }
  double *a = filled(n, 1), *b = filled(n, 2);
  double *c = calloc((size_t)n * (size_t)n, sizeof(double));
  matmul(n, a, b, c);
  double sum = 0.0;
  for (int i = 0; i < n * n; ++i)
    sum += c[i];
  printf("matmul n=%d checksum=%.12g\n", n, sum);
  if (dumpDir && dump(dumpDir, "C.bin", c, sizeof(double) * (size_t)n * n))
    return 1;
  free(a);
  free(b);
  free(c);
  return 0;
}
