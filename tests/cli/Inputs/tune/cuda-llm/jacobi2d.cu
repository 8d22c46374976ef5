// A CUDA campaign's source on the fake device (tune-cuda-fake.test): the
// jacobi2d kernel of r3-make-capture's synthetic capture, with one knob.
// BROKEN=1 does not compile, so that a compile error is one of the results.
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef BROKEN
#define BROKEN 0
#endif

__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X >= NX || Y >= NY)
    return;
#if BROKEN
  this does not compile;
#endif
  float Sum = 0;
#pragma unroll UNROLL
  for (int D = -1; D <= 1; ++D)
    Sum += In[Y * NX + min(max(X + D, 0), NX - 1)];
  Out[Y * NX + X] = Sum / 3;
}
