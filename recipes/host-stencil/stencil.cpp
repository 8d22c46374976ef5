// host-stencil: a 2-D Jacobi relaxation, the inner loop of many PDE solvers.
// The kernel is `jacobi2d`, a C++ function (so its symbol is mangled:
// _Z8jacobi2diiPKfPf); main sweeps it T times, swapping the two grids, so
// each sweep is one launch of the kernel. With `--dump DIR` the grid written
// by the first sweep is stored in DIR/out.bin for comparison with a replay.
//
//   ./stencil [N [T]] [--dump DIR]      (N = 256, T = 8 by default)
#include <cstdio>
#include <cstdlib>
#include <cstring>

void jacobi2d(int rows, int cols, const float *in, float *out) {
  for (int i = 1; i < rows - 1; ++i)
    for (int j = 1; j < cols - 1; ++j)
      out[i * cols + j] =
          0.2f * (in[i * cols + j] + in[(i - 1) * cols + j] +
                  in[(i + 1) * cols + j] + in[i * cols + j - 1] +
                  in[i * cols + j + 1]);
}

static bool dump(const char *dir, const float *p, size_t n) {
  char path[4096];
  std::snprintf(path, sizeof path, "%s/out.bin", dir);
  std::FILE *f = std::fopen(path, "wb");
  bool ok = f && std::fwrite(p, sizeof(float), n, f) == n;
  return f && std::fclose(f) == 0 && ok;
}

int main(int argc, char **argv) {
  int n = 256, steps = 8, positional = 0;
  const char *dumpDir = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
      dumpDir = argv[++i];
    else if (positional++ == 0)
      n = std::atoi(argv[i]);
    else
      steps = std::atoi(argv[i]);
  }
  if (n < 3 || steps < 1) {
    std::fprintf(stderr, "usage: stencil [N [T]] [--dump DIR]\n");
    return 2;
  }
  size_t cells = size_t(n) * size_t(n);
  float *a = new float[cells], *b = new float[cells];
  for (size_t i = 0; i < cells; ++i)
    a[i] = b[i] = float((i * 7919) % 1000) / 1000.0f;
  for (int t = 0; t < steps; ++t) {
    jacobi2d(n, n, a, b);
    if (t == 0 && dumpDir && !dump(dumpDir, b, cells)) {
      std::fprintf(stderr, "stencil: cannot write %s/out.bin\n", dumpDir);
      return 1;
    }
    float *tmp = a;
    a = b;
    b = tmp;
  }
  double sum = 0;
  for (size_t i = 0; i < cells; ++i)
    sum += a[i];
  std::printf("stencil n=%d steps=%d checksum=%.9g\n", n, steps, sum);
  delete[] a;
  delete[] b;
  return 0;
}
