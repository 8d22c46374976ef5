// A CUDA application whose kernel reads a texture object, for r3 record's
// test: the capture cannot hold the texture's descriptor, so recording
// tex_fetch is refused while the application runs on and checks its result.
//
//   cuda-texture
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" __global__ void tex_fetch(cudaTextureObject_t T, float *Out, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = 2.0f * tex1Dfetch<float>(T, I);
}

namespace {
void check(cudaError_t E, const char *What) {
  if (E != cudaSuccess) {
    std::fprintf(stderr, "cuda-texture: %s: %s\n", What, cudaGetErrorString(E));
    std::exit(2);
  }
}
} // namespace

int main() {
  const int N = 1024;
  std::vector<float> In(N);
  for (int I = 0; I < N; ++I)
    In[I] = float(I);
  float *Src = nullptr, *Out = nullptr;
  check(cudaMalloc(&Src, N * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&Out, N * sizeof(float)), "cudaMalloc");
  check(cudaMemcpy(Src, In.data(), N * sizeof(float), cudaMemcpyHostToDevice),
        "H2D");
  cudaResourceDesc Res = {};
  Res.resType = cudaResourceTypeLinear;
  Res.res.linear.devPtr = Src;
  Res.res.linear.desc = cudaCreateChannelDesc<float>();
  Res.res.linear.sizeInBytes = N * sizeof(float);
  cudaTextureDesc Tex = {};
  Tex.readMode = cudaReadModeElementType;
  cudaTextureObject_t T = 0;
  check(cudaCreateTextureObject(&T, &Res, &Tex, nullptr),
        "cudaCreateTextureObject");
  tex_fetch<<<(N + 255) / 256, 256>>>(T, Out, N);
  check(cudaGetLastError(), "launch");
  std::vector<float> Got(N);
  check(cudaMemcpy(Got.data(), Out, N * sizeof(float), cudaMemcpyDeviceToHost),
        "D2H");
  for (int I = 0; I < N; ++I)
    if (Got[I] != 2.0f * In[I]) {
      std::fprintf(stderr, "cuda-texture: wrong result at %d\n", I);
      return 1;
    }
  check(cudaDestroyTextureObject(T), "cudaDestroyTextureObject");
  std::printf("cuda-texture: ok (texture object %llu)\n",
              static_cast<unsigned long long>(T));
  return 0;
}
