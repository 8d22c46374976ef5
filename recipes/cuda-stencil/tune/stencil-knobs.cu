// cuda-stencil's kernel with knobs, device code only: the same kernel as
// stencil.cu's (same name and parameters, so the same mangled name
// _Z8jacobi2dPKfPfii) and the same module globals, with preprocessor knobs.
// Every knob at its first value computes what stencil.cu's kernel computes.
//
//   ROWS  rows of cells each thread updates (1: one cell a thread, as
//         stencil.cu). A block covers blockDim.x x (blockDim.y * ROWS)
//         cells; blocks walk the plate in a grid-stride loop, so any grid
//         covers it. Under the grid rule (one thread a cell) a block with
//         nothing left to do returns at once.
//   LDG   1: read In through the read-only data cache (__ldg). In is never
//         written by the kernel (Out is the other buffer), so the values
//         read are the same.
//   SMEM  1: stage the block's cells and their one-cell halo in shared
//         memory, then compute from there. A block whose tile does not fit
//         the static array reads global memory instead.
//
// Bitwise: every cell is computed by the same expression, written as
// stencil.cu writes it (the same products added in the same order, so every
// compiler contracts it into the same fused multiply-adds), from the same
// input values; only where the values are read from changes.
//
// The counter. stencil.cu adds 1 to CellsUpdated for each block whose thread
// (0, 0) is an interior cell, so it counts the blocks of the launch: with a
// block of another size the count would change. Here the count does not
// depend on the block the kernel runs with: an interior cell at (X, Y) adds 1
// when X and Y are multiples of the recorded block's dimensions (16 x 16), the
// cells that were the (0, 0) threads of the recorded launch. Under the
// recorded 16 x 16 launch that is the same set of threads, so the count is
// the recorded one whatever block the campaign tries.
#ifndef ROWS
#define ROWS 1
#endif
#ifndef LDG
#define LDG 0
#endif
#ifndef SMEM
#define SMEM 0
#endif

// The block of the recorded launch (stencil.cu launches 16 x 16): not knobs.
#define REC_BLOCK_X 16
#define REC_BLOCK_Y 16

__constant__ float Weights[5]; // centre, west, east, south, north
__device__ unsigned long long CellsUpdated;

static __device__ __forceinline__ float load(const float *P) {
#if LDG
  return __ldg(P);
#else
  return *P;
#endif
}

static __device__ __forceinline__ void count(int X, int Y) {
  if (X % REC_BLOCK_X == 0 && Y % REC_BLOCK_Y == 0)
    atomicAdd(&CellsUpdated, 1ull);
}

#if SMEM
// Room for a 64 x 16 block's tile and halo, ROWS rows a thread.
#define SMEM_FLOATS ((64 + 2) * (16 * ROWS + 2))
#endif

__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  const int TileW = blockDim.x, TileH = blockDim.y * ROWS;
#if SMEM
  __shared__ float Tile[SMEM_FLOATS];
  const int Pitch = TileW + 2;
  // The same for every thread of the block.
  const bool Staged = (TileW + 2) * (TileH + 2) <= SMEM_FLOATS;
#endif
  for (int Y0 = blockIdx.y * TileH; Y0 < NY; Y0 += gridDim.y * TileH)
    for (int X0 = blockIdx.x * TileW; X0 < NX; X0 += gridDim.x * TileW) {
#if SMEM
      if (Staged) {
        __syncthreads(); // the last tile's readers are done
        for (int SY = threadIdx.y; SY < TileH + 2; SY += blockDim.y)
          for (int SX = threadIdx.x; SX < TileW + 2; SX += blockDim.x) {
            int GX = X0 - 1 + SX, GY = Y0 - 1 + SY;
            if (GX >= 0 && GX < NX && GY >= 0 && GY < NY)
              Tile[SY * Pitch + SX] = load(&In[GY * NX + GX]);
          }
        __syncthreads();
      }
#endif
      const int X = X0 + threadIdx.x;
#pragma unroll
      for (int R = 0; R < ROWS; ++R) {
        const int Y = Y0 + R * blockDim.y + threadIdx.y;
        if (X >= NX || Y >= NY)
          continue;
        int I = Y * NX + X;
#if SMEM
        if (Staged) {
          const float *S = &Tile[(Y - Y0 + 1) * Pitch + (X - X0 + 1)];
          if (X == 0 || Y == 0 || X == NX - 1 || Y == NY - 1) {
            Out[I] = S[0]; // fixed boundary
            continue;
          }
          Out[I] = Weights[0] * S[0] + Weights[1] * S[-1] +
                   Weights[2] * S[1] + Weights[3] * S[-Pitch] +
                   Weights[4] * S[Pitch];
          count(X, Y);
          continue;
        }
#endif
        if (X == 0 || Y == 0 || X == NX - 1 || Y == NY - 1) {
          Out[I] = load(&In[I]); // fixed boundary
          continue;
        }
        Out[I] = Weights[0] * load(&In[I]) + Weights[1] * load(&In[I - 1]) +
                 Weights[2] * load(&In[I + 1]) +
                 Weights[3] * load(&In[I - NX]) +
                 Weights[4] * load(&In[I + NX]);
        count(X, Y);
      }
    }
}
