// faulting: a store through a wild pointer
__constant__ float Weights[5];
__device__ unsigned long long CellsUpdated;

__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X >= NX || Y >= NY)
    return;
  if (X == 1 && Y == 1)
    *reinterpret_cast<volatile float *>(0x10ull) = 1.0f;
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
