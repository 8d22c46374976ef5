// cuda-stencil: a 2-D Jacobi heat-diffusion miniature. A plate of NX x NY
// cells relaxes over STEPS time steps, one kernel launch a step, ping-ponging
// between two device buffers; the five-point weights live in __constant__
// memory and a __device__ counter sums the cells updated, so a recorded launch
// reaches device allocations and both kinds of module globals. Built with nvcc
// and its default static cudart, as most applications are.
//
//   ./stencil [--nx N] [--ny N] [--steps K] [--dump DIR]
//
// It checks its own result against the same arithmetic on the CPU and exits
// 1 on a mismatch. With --dump DIR it writes the output buffer of every step,
// DIR/step-<k>.bin (raw floats), so tests can compare a capture's post-state
// with what the application itself computed.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

__constant__ float Weights[5]; // centre, west, east, south, north
__device__ unsigned long long CellsUpdated;

__global__ void jacobi2d(const float *In, float *Out, int NX, int NY) {
  int X = blockIdx.x * blockDim.x + threadIdx.x;
  int Y = blockIdx.y * blockDim.y + threadIdx.y;
  if (X >= NX || Y >= NY)
    return;
  int I = Y * NX + X;
  if (X == 0 || Y == 0 || X == NX - 1 || Y == NY - 1) {
    Out[I] = In[I]; // fixed boundary
    return;
  }
  Out[I] = Weights[0] * In[I] + Weights[1] * In[I - 1] +
           Weights[2] * In[I + 1] + Weights[3] * In[I - NX] +
           Weights[4] * In[I + NX];
  if (threadIdx.x == 0 && threadIdx.y == 0)
    atomicAdd(&CellsUpdated, 1ull);
}

namespace {
struct Options {
  int NX = 512, NY = 384, Steps = 8;
  std::string Dump;
};

void check(cudaError_t E, const char *What) {
  if (E == cudaSuccess)
    return;
  std::fprintf(stderr, "stencil: %s: %s\n", What, cudaGetErrorString(E));
  std::exit(2);
}

Options parse(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I + 1 < Argc; I += 2) {
    std::string A = Argv[I];
    if (A == "--nx")
      O.NX = std::atoi(Argv[I + 1]);
    else if (A == "--ny")
      O.NY = std::atoi(Argv[I + 1]);
    else if (A == "--steps")
      O.Steps = std::atoi(Argv[I + 1]);
    else if (A == "--dump")
      O.Dump = Argv[I + 1];
    else {
      std::fprintf(stderr, "stencil: unknown option %s\n", A.c_str());
      std::exit(2);
    }
  }
  return O;
}

std::vector<float> initial(const Options &O) {
  std::vector<float> T(size_t(O.NX) * O.NY, 0.0f);
  for (int X = 0; X < O.NX; ++X)
    T[X] = 100.0f; // a hot top edge
  for (int Y = O.NY / 3; Y < 2 * O.NY / 3; ++Y)
    T[size_t(Y) * O.NX + O.NX / 2] = 50.0f; // and a warm rod
  return T;
}

void cpuStep(const std::vector<float> &In, std::vector<float> &Out,
             const Options &O, const float *W) {
  for (int Y = 0; Y < O.NY; ++Y)
    for (int X = 0; X < O.NX; ++X) {
      size_t I = size_t(Y) * O.NX + X;
      if (X == 0 || Y == 0 || X == O.NX - 1 || Y == O.NY - 1)
        Out[I] = In[I];
      else
        Out[I] = W[0] * In[I] + W[1] * In[I - 1] + W[2] * In[I + 1] +
                 W[3] * In[I - O.NX] + W[4] * In[I + O.NX];
    }
}

void dump(const Options &O, int Step, const std::vector<float> &T) {
  std::string Path = O.Dump + "/step-" + std::to_string(Step) + ".bin";
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F || std::fwrite(T.data(), sizeof(float), T.size(), F) != T.size()) {
    std::fprintf(stderr, "stencil: cannot write %s\n", Path.c_str());
    std::exit(2);
  }
  std::fclose(F);
}
} // namespace

int main(int Argc, char **Argv) {
  Options O = parse(Argc, Argv);
  const float W[5] = {0.6f, 0.1f, 0.1f, 0.1f, 0.1f};
  size_t Bytes = size_t(O.NX) * O.NY * sizeof(float);
  std::vector<float> Host = initial(O), Ref = Host, Next(Host.size());
  float *Buf[2];
  check(cudaMalloc(&Buf[0], Bytes), "cudaMalloc");
  check(cudaMalloc(&Buf[1], Bytes), "cudaMalloc");
  check(cudaMemcpy(Buf[0], Host.data(), Bytes, cudaMemcpyHostToDevice),
        "cudaMemcpy");
  check(cudaMemcpyToSymbol(Weights, W, sizeof(W)), "cudaMemcpyToSymbol");
  dim3 Block(16, 16), Grid((O.NX + 15) / 16, (O.NY + 15) / 16);
  for (int S = 0; S < O.Steps; ++S) {
    jacobi2d<<<Grid, Block>>>(Buf[S % 2], Buf[(S + 1) % 2], O.NX, O.NY);
    check(cudaGetLastError(), "jacobi2d launch");
    cpuStep(Ref, Next, O, W);
    Ref.swap(Next);
    if (!O.Dump.empty()) {
      check(cudaMemcpy(Host.data(), Buf[(S + 1) % 2], Bytes,
                       cudaMemcpyDeviceToHost),
            "cudaMemcpy");
      dump(O, S, Host);
    }
  }
  check(cudaMemcpy(Host.data(), Buf[O.Steps % 2], Bytes,
                   cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  double MaxErr = 0;
  for (size_t I = 0; I < Host.size(); ++I)
    MaxErr = std::fmax(MaxErr, std::fabs(Host[I] - Ref[I]));
  unsigned long long Cells = 0;
  check(cudaMemcpyFromSymbol(&Cells, CellsUpdated, sizeof(Cells)),
        "cudaMemcpyFromSymbol");
  std::printf("stencil: %dx%d, %d steps, max error %.2e, %llu blocks updated\n",
              O.NX, O.NY, O.Steps, MaxErr, Cells);
  cudaFree(Buf[0]);
  cudaFree(Buf[1]);
  if (MaxErr > 1e-3) {
    std::fprintf(stderr, "stencil: result differs from the CPU's\n");
    return 1;
  }
  return 0;
}
