// RewriteTest's emulation of a CUDA grid on the host, to run a resolved
// kernel of rewrite-gridstride.cu: every thread of every block in turn
// (the kernels have no barrier). Arguments: the kernel (saxpy, window or
// select), the grid's blocks, the block's threads; prints every output
// element.
#include <cstdio>
#include <cstdlib>

struct Dim {
  unsigned x = 1, y = 1, z = 1;
};
static Dim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
static void __syncthreads() {}
#include R3_KERNEL_FILE

int main(int argc, char **argv) {
  const unsigned N = 1000;
  static float In[N], Out[N];
  static int Mat[N];
  for (unsigned I = 0; I < N; ++I)
    In[I] = float(I % 17) - 3, Out[I] = float(I % 5),
    Mat[I] = int(I % 3) - (I % 7 == 0);
  gridDim.x = unsigned(std::atoi(argv[2]));
  blockDim.x = unsigned(std::atoi(argv[3]));
  for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
    for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x) {
      if (argv[1][0] == 's' && argv[1][1] == 'a')
        saxpy(int(N), 2.0f, In, Out);
      else if (argv[1][0] == 's')
        select(Mat, Out, int(N), 1);
      else
        window(In, Out, N);
    }
  for (unsigned I = 0; I < N; ++I)
    std::printf("%g\n", double(Out[I]));
}
