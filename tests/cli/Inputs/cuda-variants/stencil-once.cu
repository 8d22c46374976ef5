// cheat: does the work in its first launch only (the verification run). A
// __device__ global of its own, which the capture does not have, outlives
// the launch: it counts the blocks that ran, and once a whole grid has, every
// later launch returns at once (tests/cli/replay-cuda-adversarial.test).
__constant__ float Weights[5];
__device__ unsigned long long CellsUpdated;
__device__ unsigned int BlocksDone;

__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  bool Again = atomicAdd(&BlocksDone, 0u) >= gridDim.x * gridDim.y;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0)
    atomicAdd(&BlocksDone, 1u);
  if (Again)
    return;
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X >= NX || Y >= NY)
    return;
  int I = Y * NX + X;
  if (X == 0 || Y == 0 || X == NX - 1 || Y == NY - 1) {
    Out[I] = In[I];
    return;
  }
  Out[I] = Weights[0] * In[I] + Weights[1] * In[I - 1] +
           Weights[2] * In[I + 1] + Weights[3] * In[I - NX] +
           Weights[4] * In[I + NX];
  if (threadIdx.x == 0 && threadIdx.y == 0)
    atomicAdd(&CellsUpdated, 1ull);
}
