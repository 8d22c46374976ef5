// host-stencil's kernel with knobs: the same function as stencil.cpp's (so
// the same mangled name), with the columns blocked and the inner loop
// unrolled by preprocessor knobs. Each output point is computed by the same
// expression in every variant, so results are bitwise the recorded ones.
//
//   JBLOCK  0: no blocking, else the number of columns in a block
//   UNROLL  the unroll count of the innermost loop
#ifndef JBLOCK
#define JBLOCK 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define R3_STR(x) #x
#define R3_UNROLL(n) _Pragma(R3_STR(clang loop unroll_count(n)))

void jacobi2d(int rows, int cols, const float *in, float *out) {
  const int jb = JBLOCK > 0 ? JBLOCK : cols;
  for (int jj = 1; jj < cols - 1; jj += jb)
    for (int i = 1; i < rows - 1; ++i) {
      const int end = jj + jb < cols - 1 ? jj + jb : cols - 1;
      R3_UNROLL(UNROLL)
      for (int j = jj; j < end; ++j)
        out[i * cols + j] =
            0.2f * (in[i * cols + j] + in[(i - 1) * cols + j] +
                    in[(i + 1) * cols + j] + in[i * cols + j - 1] +
                    in[i * cols + j + 1]);
    }
}
