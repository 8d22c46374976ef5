// A loop kernel for tests/cli/pass-lists.test: nested loops with a reduction,
// integer division and float arithmetic, so that loop, scalar and
// vectorizing passes all find something to do.
void matmul(int N, const float *A, const float *B, float *C) {
  for (int I = 0; I < N; ++I)
    for (int J = 0; J < N; ++J) {
      float S = 0;
      for (int K = 0; K < N; ++K)
        S += A[I * N + K] * B[K * N + J];
      C[I * N + J] = S;
    }
}

int sumThirds(int N, const int *X) {
  int S = 0;
  for (int I = 0; I < N; ++I)
    S += X[I] / 3;
  return S;
}
