// The kernel of cuda-spmv, device code only, so that a variant compiler can
// compile this file on its own (clang --cuda-device-only). One thread per
// row of a CSR matrix (the "scalar" kernel): rows are of uneven length and
// the columns they reach are scattered, so loads of X are indirect and
// poorly coalesced, the access pattern of unstructured-mesh and graph codes.
// The block size is the launch's: grid_x = ceil(N / block_x).

__global__ void spmv_csr(const int *RowPtr, const int *ColIdx,
                         const float *Values, const float *X, float *Y,
                         int N) {
  int Row = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row >= N)
    return;
  float Sum = 0.0f;
  for (int K = RowPtr[Row]; K < RowPtr[Row + 1]; ++K)
    Sum += Values[K] * X[ColIdx[K]];
  Y[Row] = Sum;
}
