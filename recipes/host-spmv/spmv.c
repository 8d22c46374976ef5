/* host-spmv: y = A x for a sparse matrix A in CSR form, the kernel of every
 * iterative solver. The matrix is a struct holding pointers to three more
 * allocations, so recording it needs the regions reachable from a pointer
 * argument, not only the ones the arguments point to. The matrix is a 2-D
 * five-point Laplacian with a deterministic perturbation. With `--dump DIR`
 * the computed y is written to DIR/y.bin.
 *
 *   ./spmv [GRID] [--dump DIR]       (GRID = 64: a 4096 x 4096 matrix)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct csr {
  int rows;
  int *rowptr;
  int *cols;
  double *vals;
};

void spmv(const struct csr *m, const double *x, double *y) {
  for (int r = 0; r < m->rows; ++r) {
    double sum = 0.0;
    for (int k = m->rowptr[r]; k < m->rowptr[r + 1]; ++k)
      sum += m->vals[k] * x[m->cols[k]];
    y[r] = sum;
  }
}

static void *checked(void *p) {
  if (!p) {
    fprintf(stderr, "spmv: out of memory\n");
    exit(1);
  }
  return p;
}

static void push(struct csr *m, int *nnz, int col, double v) {
  m->cols[*nnz] = col;
  m->vals[*nnz] = v;
  ++*nnz;
}

static struct csr *laplacian(int g) {
  struct csr *m = checked(malloc(sizeof *m));
  int n = g * g, nnz = 0;
  m->rows = n;
  m->rowptr = checked(malloc(sizeof(int) * (size_t)(n + 1)));
  m->cols = checked(malloc(sizeof(int) * (size_t)n * 5));
  m->vals = checked(malloc(sizeof(double) * (size_t)n * 5));
  for (int i = 0; i < g; ++i)
    for (int j = 0; j < g; ++j) {
      int r = i * g + j;
      m->rowptr[r] = nnz;
      if (i > 0)
        push(m, &nnz, r - g, -1.0);
      if (j > 0)
        push(m, &nnz, r - 1, -1.0);
      push(m, &nnz, r, 4.0 + (double)(r % 7) / 7.0);
      if (j < g - 1)
        push(m, &nnz, r + 1, -1.0);
      if (i < g - 1)
        push(m, &nnz, r + g, -1.0);
    }
  m->rowptr[n] = nnz;
  return m;
}

int main(int argc, char **argv) {
  int g = 64;
  const char *dumpDir = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
      dumpDir = argv[++i];
    else if ((g = atoi(argv[i])) <= 1) {
      fprintf(stderr, "usage: spmv [GRID] [--dump DIR]\n");
      return 2;
    }
  }
  struct csr *m = laplacian(g);
  double *x = checked(malloc(sizeof(double) * (size_t)m->rows));
  double *y = checked(calloc((size_t)m->rows, sizeof(double)));
  for (int i = 0; i < m->rows; ++i)
    x[i] = (double)(i % 13) - 6.0;
  spmv(m, x, y);
  double sum = 0.0;
  for (int i = 0; i < m->rows; ++i)
    sum += y[i] * (double)(i % 3);
  printf("spmv rows=%d checksum=%.12g\n", m->rows, sum);
  if (dumpDir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/y.bin", dumpDir);
    FILE *f = fopen(path, "wb");
    size_t n = (size_t)m->rows;
    if (!f || fwrite(y, sizeof(double), n, f) != n || fclose(f) != 0) {
      fprintf(stderr, "spmv: cannot write %s\n", path);
      return 1;
    }
  }
  return 0;
}
