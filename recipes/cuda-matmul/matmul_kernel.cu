// The kernel of cuda-matmul, device code only, so that a variant compiler
// can compile this file on its own (clang --cuda-device-only). C = A * B for
// row-major N x N floats, tiled through shared memory: each block of T x T
// threads computes a T x T tile of C, walking the K dimension in steps of T
// with one tile of A and one of B staged in dynamic shared memory. The tile
// size is the launch's, not the kernel's: the block must be square,
// (T, T, 1) with T <= 32, the dynamic shared memory 2 * T * T * 4 bytes, and
// grid = (ceil(N / T), ceil(N / T), 1). Edges are zero-padded, so any N works.

__global__ void matmul_tiled(const float *A, const float *B, float *C, int N) {
  extern __shared__ float Tiles[]; // [T][T] of A, then [T][T] of B
  const int T = blockDim.x;
  float *As = Tiles, *Bs = Tiles + T * T;
  int Tx = threadIdx.x, Ty = threadIdx.y;
  int Row = blockIdx.y * T + Ty, Col = blockIdx.x * T + Tx;
  float Sum = 0.0f;
  for (int K0 = 0; K0 < N; K0 += T) {
    int Ka = K0 + Tx, Kb = K0 + Ty;
    As[Ty * T + Tx] = Row < N && Ka < N ? A[size_t(Row) * N + Ka] : 0.0f;
    Bs[Ty * T + Tx] = Kb < N && Col < N ? B[size_t(Kb) * N + Col] : 0.0f;
    __syncthreads();
    for (int K = 0; K < T; ++K)
      Sum += As[Ty * T + K] * Bs[K * T + Tx];
    __syncthreads();
  }
  if (Row < N && Col < N)
    C[size_t(Row) * N + Col] = Sum;
}
