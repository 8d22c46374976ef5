// Separately compiled device code (nvcc -rdc=true), for the cubin texture
// reader's test: device functions keep sections of their own (not inlined:
// __noinline__), and one of them reads a texture.
#include <cuda_runtime.h>

__device__ __noinline__ float lookup(cudaTextureObject_t T, int I) {
  return tex1Dfetch<float>(T, I);
}

__device__ __noinline__ float twice(const float *In, int I) {
  return 2 * In[I];
}

extern "C" __global__ void calls_lookup(cudaTextureObject_t T, float *Out) {
  Out[threadIdx.x] = lookup(T, threadIdx.x);
}

extern "C" __global__ void calls_twice(float *Out) {
  Out[threadIdx.x] = twice(Out, threadIdx.x);
}
