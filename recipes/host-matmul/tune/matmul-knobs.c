/* host-matmul's kernel with knobs: the same function as matmul.c's, its loop
 * order, blocking of k and unrolling chosen by preprocessor knobs (the
 * campaign's [kernel.knobs]). Every choice adds the products of each output
 * element in the same order (k ascending, starting from 0.0), so every variant
 * computes bitwise what the recorded one did; only the speed differs.
 *
 *   ORDER   0: i-j-k (a dot product per element), 1: i-k-j (row updates)
 *   KBLOCK  0: no blocking, else the length of a block of k (ORDER 1 only)
 *   UNROLL  the unroll count of the innermost loop
 */
#ifndef ORDER
#define ORDER 0
#endif
#ifndef KBLOCK
#define KBLOCK 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define R3_STR(x) #x
#define R3_UNROLL(n) _Pragma(R3_STR(clang loop unroll_count(n)))

void matmul(int n, const double *a, const double *b, double *c) {
#if ORDER == 0
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      R3_UNROLL(UNROLL)
      for (int k = 0; k < n; ++k)
        sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
#else
  const int kb = KBLOCK > 0 ? KBLOCK : n;
  for (int i = 0; i < n * n; ++i)
    c[i] = 0.0;
  for (int kk = 0; kk < n; kk += kb)
    for (int i = 0; i < n; ++i)
      for (int k = kk; k < n && k < kk + kb; ++k) {
        const double aik = a[i * n + k];
        R3_UNROLL(UNROLL)
        for (int j = 0; j < n; ++j)
          c[i * n + j] += aik * b[k * n + j];
      }
#endif
}
