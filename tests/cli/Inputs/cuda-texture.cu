// A CUDA application with texture objects, for r3 record's test: the capture
// cannot hold a texture's descriptor, so recording a kernel that reads one is
// refused (tex_fetch, through a parameter; tex_struct, through a struct
// parameter), while the application runs on and checks its result. shift_by
// takes the handle's value as an ordinary 8-byte integer and reads no
// texture: it is recorded.
//
//   cuda-texture
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

struct Lookup {
  int N;
  cudaTextureObject_t Tex;
  float *Out;
};

extern "C" __global__ void shift_by(long long Shift, float *Out, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = float(I) + float(Shift);
}

extern "C" __global__ void tex_fetch(cudaTextureObject_t T, float *Out, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = 2.0f * tex1Dfetch<float>(T, I);
}

extern "C" __global__ void tex_struct(Lookup L) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < L.N)
    L.Out[I] = 3.0f * tex1Dfetch<float>(L.Tex, I);
}

namespace {
void check(cudaError_t E, const char *What) {
  if (E != cudaSuccess) {
    std::fprintf(stderr, "cuda-texture: %s: %s\n", What, cudaGetErrorString(E));
    std::exit(2);
  }
}

/// Out's values, which must be Factor * In[I] + Shift.
bool expect(const float *Out, const std::vector<float> &In, float Factor,
            float Shift, const char *Kernel) {
  std::vector<float> Got(In.size());
  check(cudaMemcpy(Got.data(), Out, In.size() * sizeof(float),
                   cudaMemcpyDeviceToHost),
        "D2H");
  for (size_t I = 0; I < In.size(); ++I)
    if (Got[I] != Factor * In[I] + Shift) {
      std::fprintf(stderr, "cuda-texture: %s: wrong result at %zu\n", Kernel,
                   I);
      return false;
    }
  return true;
}
} // namespace

int main() {
  const int N = 1024, Blocks = (N + 255) / 256;
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

  // The handle's value as an integer: equal to a live handle, no texture.
  long long Shift = static_cast<long long>(T);
  shift_by<<<Blocks, 256>>>(Shift, Out, N);
  check(cudaGetLastError(), "launch");
  bool Ok = expect(Out, In, 1.0f, float(Shift), "shift_by");
  tex_fetch<<<Blocks, 256>>>(T, Out, N);
  check(cudaGetLastError(), "launch");
  Ok = Ok && expect(Out, In, 2.0f, 0.0f, "tex_fetch");
  tex_struct<<<Blocks, 256>>>(Lookup{N, T, Out});
  check(cudaGetLastError(), "launch");
  Ok = Ok && expect(Out, In, 3.0f, 0.0f, "tex_struct");
  if (!Ok)
    return 1;
  check(cudaDestroyTextureObject(T), "cudaDestroyTextureObject");
  std::printf("cuda-texture: ok (texture object %llu)\n",
              static_cast<unsigned long long>(T));
  return 0;
}
