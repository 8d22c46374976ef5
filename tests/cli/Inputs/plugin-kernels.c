// Kernels for the plugin tests: every slot encoding (pointer, integers of
// several widths, float, double), a return value, globals of each kind, a
// callee, an annotated kernel, and a function the patterns do not select.
#include <stdint.h>

double scale = 2.0; // a non-constant global: declared, listed
static int calls;   // an internal one: renamed __r3_internal.calls
const int offsets[4] = {1, 2, 3, 4}; // constant: copied into the bitcode

static double twice(double x) { return 2.0 * x; }

void axpy(int n, double a, const double *x, double *y) {
  for (int i = 0; i < n; ++i)
    y[i] += a * twice(x[i]) * scale + offsets[i & 3];
  calls++;
}

float mix(float f, int8_t small, uint16_t half, int64_t big) {
  return f + small + half + (float)big;
}

__attribute__((annotate("r3_kernel"))) long count_calls(void) { return calls; }

int not_a_kernel(int z) { return z + 1; }
