/* An application that passes a stack array to a recorded kernel: r3 cannot
 * know the array's extent, so the capture must be refused, precisely. */
#include <stdio.h>

void scale(int n, double f, double *v) {
  for (int i = 0; i < n; ++i)
    v[i] *= f;
}

int main(void) {
  double v[16];
  for (int i = 0; i < 16; ++i)
    v[i] = i;
  scale(16, 2.0, v);
  printf("v[15]=%g\n", v[15]);
  return 0;
}
