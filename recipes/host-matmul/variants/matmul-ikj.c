/* A source variant of the host-matmul kernel: the i-k-j loop order, which
 * walks b and c row by row. Each c[i][j] still adds its products in k order,
 * from 0.0, so the result is bitwise the recorded one. */
void matmul(int n, const double *a, const double *b, double *c) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      c[i * n + j] = 0.0;
    for (int k = 0; k < n; ++k) {
      double aik = a[i * n + k];
      for (int j = 0; j < n; ++j)
        c[i * n + j] += aik * b[k * n + j];
    }
  }
}
