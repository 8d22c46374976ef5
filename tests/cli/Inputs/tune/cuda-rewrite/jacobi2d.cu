// The rewrite operator's kernel on the fake device (tune-rewrite.test): the
// jacobi2d kernel of r3-make-capture's synthetic capture as anyone would
// write it, with no knob: r3 finds its loop and its pointers itself.
__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X >= NX || Y >= NY)
    return;
  float Sum = 0;
  for (int D = -1; D <= 1; ++D)
    Sum += In[Y * NX + min(max(X + D, 0), NX - 1)];
  Out[Y * NX + X] = Sum / 3;
}
