// C++ kernels for the plugin tests: mangled names selected by their
// demangled form, a template instantiation (weak_odr, in a comdat), a static
// data member, and a kernel whose body handles an exception (its personality
// moves with the body).
#include <cstdio>
#include <stdexcept>

namespace ns {
struct Grid {
  static int counter;
};
int Grid::counter = 0;

void scale(double *v, int n, double f) {
  for (int i = 0; i < n; ++i)
    v[i] *= f;
  ++Grid::counter;
}

template <typename T> T sum(const T *v, int n) {
  T s = 0;
  for (int i = 0; i < n; ++i)
    s += v[i];
  return s;
}
template float sum<float>(const float *, int);

__attribute__((noinline)) void check(int n) {
  if (n < 0)
    throw std::invalid_argument("negative");
}

int guarded(int n) {
  try {
    check(n);
    return n;
  } catch (const std::exception &) {
    return -1;
  }
}
} // namespace ns

int main() {
  double v[2] = {1, 2};
  ns::scale(v, 2, 3.0);
  float f[3] = {1, 2, 3};
  std::printf("app: v = %g %g, sum = %g, guarded = %d %d, counter = %d\n", v[0],
              v[1], ns::sum(f, 3), ns::guarded(4), ns::guarded(-4),
              ns::Grid::counter);
  return 0;
}
