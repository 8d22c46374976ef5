// A catalogue pattern among the adversarial candidates (replay-catalogue.test):
// shared memory over the device's limit, which a runtime that does not check
// would let the kernel read uninitialized.
__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  __shared__ float Tile[64 * 1024];
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X >= NX || Y >= NY)
    return;
  Tile[(Y * NX + X) % (64 * 1024)] = In[Y * NX + X];
  __syncthreads();
  Out[Y * NX + X] = Tile[(Y * NX + X) % (64 * 1024)];
}
