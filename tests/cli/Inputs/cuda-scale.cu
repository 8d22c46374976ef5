// A small CUDA kernel for the r3 compile tests: a scalar factor, a count and
// a loop whose trip count is a parameter, so specialization has something to
// fold; blockDim/gridDim reads for the dimension specialization. No host
// headers, so NVRTC compiles it too.
#include "cuda-scale.h"

__global__ void scale(float *Out, const float *In, float Factor, int N,
                      int Repeat) {
  int Stride = blockDim.x * gridDim.x;
  for (int I = blockIdx.x * blockDim.x + threadIdx.x; I < N; I += Stride) {
    float V = In[I];
    for (int R = 0; R < Repeat * SCALE_REPEAT; ++R)
      V = V * Factor + 1.0f;
    Out[I] = V;
  }
}

__global__ void scale(double *Out, const double *In, double Factor, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = In[I] * Factor;
}

__global__ void shift(int *Data, int By) { Data[threadIdx.x] += By; }
