// A catalogue pattern among the adversarial candidates (replay-catalogue.test):
// stream injection, the work launched from the kernel onto a stream of its
// own, which the timer of the launch would not wait for.
__global__ void work(const float *In, float *Out, int NX, int NY) {
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X < NX && Y < NY)
    Out[Y * NX + X] = In[Y * NX + X];
}

__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 &&
      threadIdx.y == 0) {
    cudaStream_t S;
    cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking);
    work<<<dim3((NX + 15) / 16, (NY + 15) / 16), dim3(16, 16), 0, S>>>(
        In, Out, NX, NY);
  }
}
