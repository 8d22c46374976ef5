// A translation unit with three kernels, for KernelAloneTest.
#include <cstdio>
#define SQ(x) square(x)

struct Pair {
  float A, B;
  __device__ float sum() const { return A + B; }
};

__global__ void other(float *X, int N);

__device__ float square(float V) { return V * V; }

/* cube: reached from scale only through twice */
__device__ float cube(float V) { return V * V * V; }

template <typename T> __device__ T twice(T V) { return 2 * V + cube(V); }

namespace detail {
__device__ int unused(int V) { return V + 1; }
}

__global__ void scale(float *X, const Pair *P, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    X[I] = twice(SQ(X[I])) + P[0].sum();
}

__global__ void other(float *X, int N) {
  if (threadIdx.x < N)
    X[threadIdx.x] = detail::unused(N); // "scale" is only in a comment
}

extern "C" __global__ void third(float *X) { X[0] = 1; }

int main() {
  float *X = nullptr;
  scale<<<1, 1>>>(X, nullptr, 1);
  other<<<1, 1>>>(X, 1);
  std::printf("done\n");
  return 0;
}
