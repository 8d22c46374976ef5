// Two kernels for tune-grid.test: scale strides over its grid (any grid
// computes the same); jacobi2d computes one element per thread.
__global__ void scale(const float *In, float *Out, int N) {
  for (int I = blockIdx.x * blockDim.x + threadIdx.x; I < N;
       I += blockDim.x * gridDim.x)
    Out[I] = 2 * In[I];
}

__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X >= NX || Y >= NY)
    return;
  Out[Y * NX + X] = In[Y * NX + X] / 3;
}
