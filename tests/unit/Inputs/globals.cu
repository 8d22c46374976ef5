// Fixture for the cubin symbol reader: module variables of every kind.
__device__ float table[37];
__device__ int counter;
__constant__ double coeffs[5];
__device__ int initialized[3] = {1, 2, 3};

__global__ void scale(float *out, int n) {
  int i = threadIdx.x;
  if (i < n)
    out[i] = table[i % 37] * coeffs[i % 5] + counter + initialized[i % 3];
}

extern "C" __global__ void plain(int *p) { p[0] = counter; }
