// cuda-multi: a two-species reaction-advection-diffusion miniature with
// operator splitting, the shape of many multiphysics codes: each time step
// advects U on one stream while V diffuses on a second, then the streams
// join (an event) and react couples the two on the first. Three kernels,
// stencil weights and rates in __constant__ memory, a __device__ counter
// accumulated across steps. Built with nvcc and its default static cudart.
//
//   ./multi [--n N] [--steps K] [--block B] [--dump DIR]
//
// It checks its result against the same steps on the CPU and exits 1 on a
// mismatch. With --dump DIR it writes, after react of every step k (when
// both streams are idle), raw little-endian files: DIR/u-<k>.bin and
// DIR/v-<k>.bin (float32, N: what react wrote), DIR/utmp-<k>.bin and
// DIR/vtmp-<k>.bin (float32, N: what advect and diffuse wrote, react's
// inputs) and DIR/counter-<k>.bin (the uint64 CellsDominant).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "multi_kernels.cu"

namespace {
const float Advect[3] = {0.25f, 0.75f, 0.0f};
const float Diffuse[3] = {0.2f, 0.6f, 0.2f};
const float Rates[2] = {0.02f, 0.01f};

struct Options {
  int N = 1 << 21, Steps = 6, Block = 256;
  std::string Dump;
};

void check(cudaError_t E, const char *What) {
  if (E == cudaSuccess)
    return;
  std::fprintf(stderr, "multi: %s: %s\n", What, cudaGetErrorString(E));
  std::exit(2);
}

int intArg(const char *Name, const char *Text) {
  int V = std::atoi(Text);
  if (V <= 0) {
    std::fprintf(stderr, "multi: %s expects a positive integer, got '%s'\n",
                 Name, Text);
    std::exit(2);
  }
  return V;
}

Options parse(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I < Argc; I += 2) {
    std::string A = Argv[I];
    if (I + 1 >= Argc) {
      std::fprintf(stderr, "multi: %s needs a value\n", A.c_str());
      std::exit(2);
    }
    if (A == "--n")
      O.N = intArg("--n", Argv[I + 1]);
    else if (A == "--steps")
      O.Steps = intArg("--steps", Argv[I + 1]);
    else if (A == "--block")
      O.Block = intArg("--block", Argv[I + 1]);
    else if (A == "--dump")
      O.Dump = Argv[I + 1];
    else {
      std::fprintf(stderr, "multi: unknown option %s\n", A.c_str());
      std::exit(2);
    }
  }
  return O;
}

/// The CPU's step, in the kernels' arithmetic; returns the dominant cells.
uint64_t cpuStep(std::vector<float> &U, std::vector<float> &V) {
  int N = int(U.size());
  std::vector<float> Ut(N), Vt(N);
  for (int I = 0; I < N; ++I) {
    int L = I == 0 ? N - 1 : I - 1, R = I == N - 1 ? 0 : I + 1;
    Ut[I] = Advect[0] * U[L] + Advect[1] * U[I] + Advect[2] * U[R];
    Vt[I] = Diffuse[0] * V[L] + Diffuse[1] * V[I] + Diffuse[2] * V[R];
  }
  uint64_t Dominant = 0;
  for (int I = 0; I < N; ++I) {
    float Flow = Rates[0] * Ut[I] - Rates[1] * Vt[I];
    U[I] = Ut[I] - Flow;
    V[I] = Vt[I] + Flow;
    Dominant += U[I] > V[I];
  }
  return Dominant;
}

template <typename T>
void dump(const Options &O, const std::string &Name, const T *Data,
          size_t Count) {
  std::string Path = O.Dump + "/" + Name;
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F || std::fwrite(Data, sizeof(T), Count, F) != Count) {
    std::fprintf(stderr, "multi: cannot write %s\n", Path.c_str());
    std::exit(2);
  }
  std::fclose(F);
}

/// The four device buffers of a step, as files named after step K.
void dumpStep(const Options &O, int K, float *const Buf[4]) {
  const char *Names[4] = {"u", "v", "utmp", "vtmp"};
  std::vector<float> Host(O.N);
  for (int B = 0; B < 4; ++B) {
    check(cudaMemcpy(Host.data(), Buf[B], O.N * sizeof(float),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy");
    dump(O, std::string(Names[B]) + "-" + std::to_string(K) + ".bin",
         Host.data(), Host.size());
  }
  unsigned long long Count = 0;
  check(cudaMemcpyFromSymbol(&Count, CellsDominant, sizeof(Count)),
        "cudaMemcpyFromSymbol");
  dump(O, "counter-" + std::to_string(K) + ".bin", &Count, 1);
}
} // namespace

int main(int Argc, char **Argv) {
  Options O = parse(Argc, Argv);
  std::vector<float> U(O.N), V(O.N);
  for (int I = 0; I < O.N; ++I) {
    double Phase = 2.0 * M_PI * I / O.N;
    U[I] = float(1.0 + 0.5 * std::sin(Phase));
    V[I] = float(1.0 + 0.5 * std::cos(3.0 * Phase));
  }
  size_t Bytes = size_t(O.N) * sizeof(float);
  float *Buf[4]; // U, V, UTmp, VTmp
  for (float *&B : Buf)
    check(cudaMalloc(&B, Bytes), "cudaMalloc");
  check(cudaMemcpy(Buf[0], U.data(), Bytes, cudaMemcpyHostToDevice),
        "cudaMemcpy");
  check(cudaMemcpy(Buf[1], V.data(), Bytes, cudaMemcpyHostToDevice),
        "cudaMemcpy");
  check(cudaMemcpyToSymbol(AdvectWeights, Advect, sizeof(Advect)), "symbol");
  check(cudaMemcpyToSymbol(DiffuseWeights, Diffuse, sizeof(Diffuse)), "symbol");
  check(cudaMemcpyToSymbol(ReactRates, Rates, sizeof(Rates)), "symbol");
  unsigned long long Zero = 0;
  check(cudaMemcpyToSymbol(CellsDominant, &Zero, sizeof(Zero)), "symbol");
  cudaStream_t SA, SB;
  check(cudaStreamCreateWithFlags(&SA, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&SB, cudaStreamNonBlocking), "stream");
  cudaEvent_t Diffused, Reacted;
  check(cudaEventCreateWithFlags(&Diffused, cudaEventDisableTiming), "event");
  check(cudaEventCreateWithFlags(&Reacted, cudaEventDisableTiming), "event");
  int Grid = (O.N + O.Block - 1) / O.Block;
  uint64_t Expected = 0;
  for (int K = 0; K < O.Steps; ++K) {
    if (K > 0) // diffuse reads the V that the last react wrote
      check(cudaStreamWaitEvent(SB, Reacted, 0), "cudaStreamWaitEvent");
    advect<<<Grid, O.Block, 0, SA>>>(Buf[0], Buf[2], O.N);
    diffuse<<<Grid, O.Block, 0, SB>>>(Buf[1], Buf[3], O.N);
    check(cudaEventRecord(Diffused, SB), "cudaEventRecord");
    check(cudaStreamWaitEvent(SA, Diffused, 0), "cudaStreamWaitEvent");
    react<<<Grid, O.Block, 0, SA>>>(Buf[2], Buf[3], Buf[0], Buf[1], O.N);
    check(cudaGetLastError(), "launch");
    check(cudaEventRecord(Reacted, SA), "cudaEventRecord");
    Expected += cpuStep(U, V);
    if (!O.Dump.empty()) {
      check(cudaStreamSynchronize(SA), "cudaStreamSynchronize");
      dumpStep(O, K, Buf);
    }
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<float> GotU(O.N), GotV(O.N);
  check(cudaMemcpy(GotU.data(), Buf[0], Bytes, cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  check(cudaMemcpy(GotV.data(), Buf[1], Bytes, cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  unsigned long long Count = 0;
  check(cudaMemcpyFromSymbol(&Count, CellsDominant, sizeof(Count)),
        "cudaMemcpyFromSymbol");
  double MaxErr = 0;
  for (int I = 0; I < O.N; ++I)
    MaxErr = std::fmax(MaxErr, std::fmax(std::fabs(GotU[I] - U[I]),
                                         std::fabs(GotV[I] - V[I])));
  // Cells where U and V differ by a rounding may count on one side only.
  uint64_t Slack = uint64_t(O.N) * O.Steps / 1000 + 16;
  uint64_t Off = Count > Expected ? Count - Expected : Expected - Count;
  std::printf("multi: %d cells, %d steps, 2 streams, max error %.2e, %llu "
              "dominant cells (cpu %llu)\n",
              O.N, O.Steps, MaxErr, Count, (unsigned long long)Expected);
  for (float *B : Buf)
    cudaFree(B);
  if (!(MaxErr <= 1e-5) || Off > Slack) {
    std::fprintf(stderr, "multi: result differs from the CPU's\n");
    return 1;
  }
  return 0;
}
