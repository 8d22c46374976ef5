// A CUDA application whose kernel reaches memory that is neither cuMemAlloc'd
// nor a module global, for r3 record's test: one buffer mapped with the VMM
// API (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess) and one in
// mapped pinned host memory (cudaHostAlloc with cudaHostAllocMapped). The
// kernel vmm_combine reads both and writes the VMM one. With --managed, a
// managed buffer is live too (the kernel does not touch it).
//
//   cuda-vmm DUMP_DIR [--managed]
//
// writes DUMP_DIR/addresses.txt ("VMM_BASE VMM_SIZE HOST_DEVPTR HOST_BYTES N",
// decimal), and the bytes the capture must hold: vmm-pre.bin and
// vmm-post.bin (the whole mapping before and after the launch) and host.bin.
// The driver functions come through cudaGetDriverEntryPointByVersion, so the
// program links cudart only, as nvcc builds it by default.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" __global__ void vmm_combine(float *V, const float *H, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    V[I] = 2.0f * V[I] + H[I];
}

namespace {
void check(cudaError_t E, const char *What) {
  if (E != cudaSuccess) {
    std::fprintf(stderr, "cuda-vmm: %s: %s\n", What, cudaGetErrorString(E));
    std::exit(2);
  }
}

void check(CUresult R, const char *What) {
  if (R != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuda-vmm: %s: CUresult %d\n", What, int(R));
    std::exit(2);
  }
}

template <typename F> F driver(const char *Name) {
  void *P = nullptr;
  cudaDriverEntryPointQueryResult Q;
  check(cudaGetDriverEntryPointByVersion(Name, &P, 12000, cudaEnableDefault, &Q),
        Name);
  if (!P || Q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "cuda-vmm: no driver entry point %s\n", Name);
    std::exit(2);
  }
  return reinterpret_cast<F>(P);
}

struct Vmm {
  decltype(&cuMemGetAllocationGranularity) Granularity =
      driver<decltype(&cuMemGetAllocationGranularity)>(
          "cuMemGetAllocationGranularity");
  decltype(&cuMemCreate) Create =
      driver<decltype(&cuMemCreate)>("cuMemCreate");
  decltype(&cuMemAddressReserve) Reserve =
      driver<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  decltype(&cuMemMap) Map = driver<decltype(&cuMemMap)>("cuMemMap");
  decltype(&cuMemSetAccess) SetAccess =
      driver<decltype(&cuMemSetAccess)>("cuMemSetAccess");
  decltype(&cuMemUnmap) Unmap = driver<decltype(&cuMemUnmap)>("cuMemUnmap");
  decltype(&cuMemRelease) Release =
      driver<decltype(&cuMemRelease)>("cuMemRelease");
  decltype(&cuMemAddressFree) Free =
      driver<decltype(&cuMemAddressFree)>("cuMemAddressFree");
};

/// Maps at least Bytes of device 0's memory; returns the base and the
/// mapping's size (a multiple of the granularity).
CUdeviceptr mapVmm(const Vmm &V, size_t Bytes, size_t &Size,
                   CUmemGenericAllocationHandle &Handle) {
  CUmemAllocationProp Prop = {};
  Prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  Prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  Prop.location.id = 0;
  size_t Gran = 0;
  check(V.Granularity(&Gran, &Prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
  Size = (Bytes + Gran - 1) / Gran * Gran;
  CUdeviceptr Base = 0;
  check(V.Reserve(&Base, Size, 0, 0, 0), "cuMemAddressReserve");
  check(V.Create(&Handle, Size, &Prop, 0), "cuMemCreate");
  check(V.Map(Base, Size, 0, Handle, 0), "cuMemMap");
  CUmemAccessDesc Access = {};
  Access.location = Prop.location;
  Access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check(V.SetAccess(Base, Size, &Access, 1), "cuMemSetAccess");
  return Base;
}

void writeFile(const std::string &Path, const void *P, size_t N) {
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F || std::fwrite(P, 1, N, F) != N || std::fclose(F) != 0) {
    std::fprintf(stderr, "cuda-vmm: cannot write %s\n", Path.c_str());
    std::exit(2);
  }
}
} // namespace

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::fprintf(stderr, "usage: cuda-vmm DUMP_DIR [--managed]\n");
    return 2;
  }
  std::string Dir = Argv[1];
  bool Managed = Argc > 2 && std::strcmp(Argv[2], "--managed") == 0;
  const int N = 1 << 16;
  const size_t Bytes = N * sizeof(float);
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "cudaFree"); // the primary context, current

  Vmm V;
  size_t Size = 0;
  CUmemGenericAllocationHandle Handle = 0;
  CUdeviceptr Base = mapVmm(V, Bytes, Size, Handle);
  float *Dv = reinterpret_cast<float *>(Base);
  std::vector<float> Init(Size / sizeof(float), 0.0f);
  for (int I = 0; I < N; ++I)
    Init[I] = 0.5f * I;
  check(cudaMemcpy(Dv, Init.data(), Size, cudaMemcpyHostToDevice), "H2D");

  float *H = nullptr, *Hd = nullptr;
  check(cudaHostAlloc(reinterpret_cast<void **>(&H), Bytes,
                      cudaHostAllocMapped),
        "cudaHostAlloc");
  check(cudaHostGetDevicePointer(reinterpret_cast<void **>(&Hd), H, 0),
        "cudaHostGetDevicePointer");
  for (int I = 0; I < N; ++I)
    H[I] = float(I % 7);

  void *M = nullptr;
  if (Managed)
    check(cudaMallocManaged(&M, 4096), "cudaMallocManaged");

  vmm_combine<<<(N + 255) / 256, 256>>>(Dv, Hd, N);
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "sync");

  std::vector<float> Post(Size / sizeof(float));
  check(cudaMemcpy(Post.data(), Dv, Size, cudaMemcpyDeviceToHost), "D2H");
  for (int I = 0; I < N; ++I)
    if (Post[I] != 2.0f * (0.5f * I) + float(I % 7)) {
      std::fprintf(stderr, "cuda-vmm: wrong result at %d\n", I);
      return 1;
    }
  writeFile(Dir + "/vmm-pre.bin", Init.data(), Size);
  writeFile(Dir + "/vmm-post.bin", Post.data(), Size);
  writeFile(Dir + "/host.bin", H, Bytes);
  std::string Addresses = std::to_string(Base) + " " + std::to_string(Size) +
                          " " + std::to_string(uintptr_t(Hd)) + " " +
                          std::to_string(Bytes) + " " + std::to_string(N) +
                          "\n";
  writeFile(Dir + "/addresses.txt", Addresses.data(), Addresses.size());

  if (M)
    check(cudaFree(M), "cudaFree");
  check(cudaFreeHost(H), "cudaFreeHost");
  check(V.Unmap(Base, Size), "cuMemUnmap");
  check(V.Release(Handle), "cuMemRelease");
  check(V.Free(Base, Size), "cuMemAddressFree");
  std::printf("cuda-vmm: ok (%d elements, mapping %zu bytes)\n", N, Size);
  return 0;
}
