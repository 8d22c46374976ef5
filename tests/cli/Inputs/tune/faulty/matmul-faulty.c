/* host-matmul's kernel with a FAULT knob that makes some variants fail, each
 * in its own way, so that a campaign meets every failure kind:
 *   0 correct, 1 dereferences null (crashed), 2 never ends (timeout),
 *   3 computes something else (wrong_result), 4 does not compile
 *   (compile_error), 5 correct and a little different (a second good one). */
#ifndef FAULT
#define FAULT 0
#endif
#if FAULT == 4
#error "this variant does not compile"
#endif

void matmul(int n, const double *a, const double *b, double *c) {
#if FAULT == 1
  *(volatile int *)0 = n;
#endif
#if FAULT == 2
  for (volatile int spin = 0; spin >= 0; spin = spin < 0 ? 0 : spin | 1)
    ;
#endif
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
#if FAULT == 5
#pragma clang loop unroll_count(2)
#endif
      for (int k = 0; k < n; ++k)
        sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = FAULT == 3 ? sum + 1.0 : sum;
    }
}
