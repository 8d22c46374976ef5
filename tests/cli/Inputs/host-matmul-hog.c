/* A variant of the host-matmul kernel that allocates without bound: the
 * replay server's address-space limit makes malloc fail before the machine
 * runs out, and the variant then writes through the null pointer (a crash,
 * which is a result). Each block is touched once and kept reachable, so the
 * allocations cannot be optimized away. */
#include <stdlib.h>
#include <string.h>

void matmul(int n, const double *a, const double *b, double *c) {
  (void)a;
  (void)b;
  for (long i = 0;; ++i) {
    char *p = malloc(1 << 26);
    *(volatile char *)p = 1;
    memcpy(&c[i % (n * n)], &p, sizeof p);
  }
}
