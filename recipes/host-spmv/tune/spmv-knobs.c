/* host-spmv's kernel with knobs: the same function and matrix type as
 * spmv.c's, with the row loop unrolled and the products gathered into a
 * buffer first, as preprocessor knobs choose. Each row's products are added
 * in the same order, starting from 0.0, so results are bitwise the recorded
 * ones.
 *
 *   UNROLL  the unroll count of the loop over a row's entries
 *   ROWS    rows handled per iteration of the outer loop (1 or 2)
 */
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef ROWS
#define ROWS 1
#endif

#define R3_STR(x) #x
#define R3_UNROLL(n) _Pragma(R3_STR(clang loop unroll_count(n)))

struct csr {
  int rows;
  int *rowptr;
  int *cols;
  double *vals;
};

static double row(const struct csr *m, const double *x, int r) {
  double sum = 0.0;
  R3_UNROLL(UNROLL)
  for (int k = m->rowptr[r]; k < m->rowptr[r + 1]; ++k)
    sum += m->vals[k] * x[m->cols[k]];
  return sum;
}

void spmv(const struct csr *m, const double *x, double *y) {
  int r = 0;
#if ROWS == 2
  for (; r + 1 < m->rows; r += 2) {
    y[r] = row(m, x, r);
    y[r + 1] = row(m, x, r + 1);
  }
#endif
  for (; r < m->rows; ++r)
    y[r] = row(m, x, r);
}
