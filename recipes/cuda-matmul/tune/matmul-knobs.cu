// cuda-matmul's kernel with knobs, device code only: the same kernel as
// matmul_kernel.cu's (same name and parameters, so the same mangled name
// _Z12matmul_tiledPKfS0_Pfi), with preprocessor knobs. Every knob at its
// first value computes what matmul_kernel.cu's kernel computes.
//
//   TM  rows of C each thread computes (rows Ty, Ty + blockDim.y, ...).
//   TN  columns of C each thread computes (columns Tx, Tx + blockDim.x, ...).
//       A block computes a (blockDim.y * TM) x (blockDim.x * TN) tile of C;
//       blocks walk C's tiles in a grid-stride loop, so any grid covers C.
//       Under the grid rule (one thread an entry of C) a block with no tile
//       left returns at once.
//   BK  the depth of the K step: 0 = blockDim.x, as matmul_kernel.cu (whose
//       tile is the block); else a fixed depth.
//
// The tiles live in static shared memory sized for blocks of up to 32 x 32
// (at most 32 KB), not in the launch's dynamic shared memory: the recorded
// 2 KB would hold only a 16 x 16 block's tiles. So the block need not be
// square: any block up to 32 x 32 works, with the grid rule
// x = ceil(N / block_x), y = ceil(N / block_y). A larger block writes
// nothing (and fails verification).
//
// Bitwise: each entry of C starts at 0 and adds A[Row][K] * B[K][Col] for K
// from 0 to N - 1 in order, one term at a time, written as matmul_kernel.cu
// writes it (so it contracts into the same fused multiply-adds), whatever
// the knobs: they change which thread computes an entry and how the tiles
// are staged, never the order of a sum. (The recipe's matrices make every
// sum exact anyway, but this does not rely on it.)
#ifndef TM
#define TM 1
#endif
#ifndef TN
#define TN 1
#endif
#ifndef BK
#define BK 0
#endif

#define MAX_BLOCK 32                        // largest block dimension
#define K_ROOM (BK > 0 ? BK : MAX_BLOCK)    // deepest K step

__global__ void matmul_tiled(const float *A, const float *B, float *C, int N) {
  __shared__ float As[MAX_BLOCK * TM * K_ROOM]; // [BY * TM][Kt] of A
  __shared__ float Bs[K_ROOM * MAX_BLOCK * TN]; // [Kt][BX * TN] of B
  const int BX = blockDim.x, BY = blockDim.y;
  if (BX > MAX_BLOCK || BY > MAX_BLOCK)
    return;
  const int Kt = BK > 0 ? BK : BX;
  const int TileR = BY * TM, TileC = BX * TN;
  const int Tx = threadIdx.x, Ty = threadIdx.y;
  for (int R0 = blockIdx.y * TileR; R0 < N; R0 += gridDim.y * TileR)
    for (int C0 = blockIdx.x * TileC; C0 < N; C0 += gridDim.x * TileC) {
      float Sum[TM][TN];
#pragma unroll
      for (int I = 0; I < TM; ++I)
#pragma unroll
        for (int J = 0; J < TN; ++J)
          Sum[I][J] = 0.0f;
      for (int K0 = 0; K0 < N; K0 += Kt) {
        for (int R = Ty; R < TileR; R += BY)
          for (int Q = Tx; Q < Kt; Q += BX) {
            int Row = R0 + R, Ka = K0 + Q;
            As[R * Kt + Q] = Row < N && Ka < N ? A[size_t(Row) * N + Ka] : 0.0f;
          }
        for (int R = Ty; R < Kt; R += BY)
          for (int Q = Tx; Q < TileC; Q += BX) {
            int Kb = K0 + R, Col = C0 + Q;
            Bs[R * TileC + Q] = Kb < N && Col < N ? B[size_t(Kb) * N + Col] : 0.0f;
          }
        __syncthreads();
        for (int K = 0; K < Kt; ++K) {
          float Av[TM], Bv[TN];
#pragma unroll
          for (int I = 0; I < TM; ++I)
            Av[I] = As[(Ty + I * BY) * Kt + K];
#pragma unroll
          for (int J = 0; J < TN; ++J)
            Bv[J] = Bs[K * TileC + Tx + J * BX];
#pragma unroll
          for (int I = 0; I < TM; ++I)
#pragma unroll
            for (int J = 0; J < TN; ++J)
              Sum[I][J] += Av[I] * Bv[J];
        }
        __syncthreads();
      }
#pragma unroll
      for (int I = 0; I < TM; ++I)
#pragma unroll
        for (int J = 0; J < TN; ++J) {
          int Row = R0 + Ty + I * BY, Col = C0 + Tx + J * BX;
          if (Row < N && Col < N)
            C[size_t(Row) * N + Col] = Sum[I][J];
        }
    }
}
