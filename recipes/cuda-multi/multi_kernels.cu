// The kernels of cuda-multi and the module globals they share, device code
// only, so that a variant compiler can compile this file on its own (clang
// --cuda-device-only). A 1-D periodic domain of N cells holds two species:
// U is advected (upwind), V diffused, each by a three-point stencil whose
// weights are __constant__; then react exchanges mass between them at
// __constant__ rates and adds the number of cells where U exceeds V to a
// __device__ counter (one atomic per block, from __syncthreads_count, so the
// count is exact and any block size works). Every kernel takes its block
// size from the launch: grid_x = ceil(N / block_x).

__constant__ float AdvectWeights[3];  // cells i-1, i, i+1
__constant__ float DiffuseWeights[3]; // cells i-1, i, i+1
__constant__ float ReactRates[2];     // U -> V, V -> U, per step
__device__ unsigned long long CellsDominant;

__global__ void advect(const float *In, float *Out, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I >= N)
    return;
  float L = In[I == 0 ? N - 1 : I - 1], R = In[I == N - 1 ? 0 : I + 1];
  Out[I] = AdvectWeights[0] * L + AdvectWeights[1] * In[I] +
           AdvectWeights[2] * R;
}

__global__ void diffuse(const float *In, float *Out, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I >= N)
    return;
  float L = In[I == 0 ? N - 1 : I - 1], R = In[I == N - 1 ? 0 : I + 1];
  Out[I] = DiffuseWeights[0] * L + DiffuseWeights[1] * In[I] +
           DiffuseWeights[2] * R;
}

__global__ void react(const float *U, const float *V, float *UOut,
                      float *VOut, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  bool Dominant = false;
  if (I < N) {
    float Flow = ReactRates[0] * U[I] - ReactRates[1] * V[I];
    float Un = U[I] - Flow, Vn = V[I] + Flow;
    UOut[I] = Un;
    VOut[I] = Vn;
    Dominant = Un > Vn;
  }
  int Count = __syncthreads_count(Dominant); // every thread of the block
  if (threadIdx.x == 0 && Count > 0)
    atomicAdd(&CellsDominant, (unsigned long long)Count);
}
