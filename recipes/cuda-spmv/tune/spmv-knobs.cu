// cuda-spmv's kernel with knobs, device code only: the same kernel as
// spmv_kernel.cu's (same name and parameters, so the same mangled name
// _Z8spmv_csrPKiS0_PKfS2_Pfi), with preprocessor knobs. Every knob at its
// first value computes what spmv_kernel.cu's kernel computes.
//
//   ROWS    rows each thread works on (1: one row a thread, as
//           spmv_kernel.cu). With 2 or 4 the thread walks its rows' nonzeros
//           side by side, one of each row per step, so their indirect loads
//           overlap. A block covers blockDim.x * ROWS rows (row
//           Row0 + R * blockDim.x + threadIdx.x for R < ROWS) and blocks walk
//           the rows in a grid-stride loop, so any grid covers them; under
//           the grid rule (one thread a row) a block with nothing left to do
//           returns at once.
//   UNROLL  0: the loop over a row's nonzeros as written (the compiler
//           chooses); N: #pragma unroll N on it.
//   LDG     1: read the matrix and X through the read-only data cache
//           (__ldg). The kernel writes only Y, a buffer none of the others
//           is, so the values read are the same.
//
// Bitwise: each row's sum starts at 0 and adds Values[K] * X[ColIdx[K]] for K
// from RowPtr[Row] up, one term at a time, written as spmv_kernel.cu writes
// it (so it contracts into the same fused multiply-adds, in the same order)
// whatever the knobs; no sum is split or reordered.
#ifndef ROWS
#define ROWS 1
#endif
#ifndef UNROLL
#define UNROLL 0
#endif
#ifndef LDG
#define LDG 0
#endif

#define R3_PRAGMA(X) _Pragma(#X)
#if UNROLL > 0
#define R3_UNROLL R3_PRAGMA(unroll UNROLL)
#else
#define R3_UNROLL
#endif

template <typename T> static __device__ __forceinline__ T load(const T *P) {
#if LDG
  return __ldg(P);
#else
  return *P;
#endif
}

__global__ void spmv_csr(const int *RowPtr, const int *ColIdx,
                         const float *Values, const float *X, float *Y,
                         int N) {
  const int Tile = blockDim.x * ROWS;
  for (int Row0 = blockIdx.x * Tile; Row0 < N; Row0 += gridDim.x * Tile) {
#if ROWS == 1
    int Row = Row0 + threadIdx.x;
    if (Row >= N)
      continue;
    float Sum = 0.0f;
    const int End = load(&RowPtr[Row + 1]);
    R3_UNROLL
    for (int K = load(&RowPtr[Row]); K < End; ++K)
      Sum += load(&Values[K]) * load(&X[load(&ColIdx[K])]);
    Y[Row] = Sum;
#else
    int K[ROWS], End[ROWS], Longest = 0;
    float Sum[ROWS];
#pragma unroll
    for (int R = 0; R < ROWS; ++R) {
      int Row = Row0 + R * blockDim.x + threadIdx.x;
      K[R] = Row < N ? load(&RowPtr[Row]) : 0;
      End[R] = Row < N ? load(&RowPtr[Row + 1]) : 0;
      Sum[R] = 0.0f;
      Longest = max(Longest, End[R] - K[R]);
    }
    // Step S adds each row's S-th term, if it has one.
    R3_UNROLL
    for (int S = 0; S < Longest; ++S) {
#pragma unroll
      for (int R = 0; R < ROWS; ++R)
        if (K[R] + S < End[R])
          Sum[R] += load(&Values[K[R] + S]) * load(&X[load(&ColIdx[K[R] + S])]);
    }
#pragma unroll
    for (int R = 0; R < ROWS; ++R) {
      int Row = Row0 + R * blockDim.x + threadIdx.x;
      if (Row < N)
        Y[Row] = Sum[R];
    }
#endif
  }
}
