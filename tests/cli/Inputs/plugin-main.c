// Calls the kernels of plugin-kernels.c with known arguments.
#include <stdint.h>
#include <stdio.h>

void axpy(int n, double a, const double *x, double *y);
float mix(float f, int8_t small, uint16_t half, int64_t big);
long count_calls(void);
int not_a_kernel(int z);

int main(void) {
  double x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  axpy(3, 0.5, x, y);
  printf("app: y = %g %g %g\n", y[0], y[1], y[2]);
  printf("app: mix = %g\n", mix(1.5f, -2, 40000, 5));
  printf("app: count_calls = %ld\n", count_calls());
  printf("app: not_a_kernel = %d\n", not_a_kernel(41));
  return 0;
}
