// Kernels with and without texture and surface use, for the cubin texture
// reader's test (CubinTexturesTest.cpp), compiled for several architectures.
#include <cuda_runtime.h>

struct Bundle {
  int N;
  cudaTextureObject_t Tex;
  float *Out;
};

// Stores the handle's value as an integer: no texture use.
extern "C" __global__ void plain_handle(unsigned long long H, float *Out,
                                        int N) {
  int I = threadIdx.x;
  if (I < N)
    Out[I] = float(H + I);
}

extern "C" __global__ void fetch_param(cudaTextureObject_t T, float *Out,
                                       int N) {
  int I = threadIdx.x;
  if (I < N)
    Out[I] = tex1Dfetch<float>(T, I);
}

extern "C" __global__ void sample_struct(Bundle B) {
  int I = threadIdx.x;
  if (I < B.N)
    B.Out[I] = tex2D<float>(B.Tex, I + 0.5f, 0.5f);
}

extern "C" __global__ void fetch_memory(const cudaTextureObject_t *Handles,
                                        float *Out, int N) {
  int I = threadIdx.x;
  if (I < N)
    Out[I] = tex1Dfetch<float>(Handles[I & 1], I);
}

extern "C" __global__ void surface_write(cudaSurfaceObject_t S, int N) {
  int I = threadIdx.x;
  if (I < N)
    surf2Dwrite(float(I), S, I * 4, 0);
}

__device__ __noinline__ float lookup(cudaTextureObject_t T, int I) {
  return tex1Dfetch<float>(T, I);
}

__device__ __noinline__ float twice(const float *In, int I) {
  return 2 * In[I];
}

// Calls a device function that reads the texture (cloned into its code).
extern "C" __global__ void calls_lookup(cudaTextureObject_t T, float *Out) {
  Out[threadIdx.x] = lookup(T, threadIdx.x);
}

extern "C" __global__ void calls_twice(float *Out) {
  Out[threadIdx.x] = twice(Out, threadIdx.x);
}
