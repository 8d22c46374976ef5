// The GPU as a ScanDevice (CudaScans.h).
#include "replay/cuda/CudaScans.h"

#include "replay/cuda/CudaApi.h"

#include <algorithm>

namespace r3::cuda {

extern const char VerifyKernelPtx[]; // VerifyKernelPtx.cpp, made by the build

Expected<std::unique_ptr<CudaScans>> CudaScans::open(CUstream S,
                                                     uint32_t Multiprocessors) {
  std::unique_ptr<CudaScans> D(new CudaScans);
  const Api &A = api();
  R3_TRY(check(
      A.cuModuleLoadDataEx(&D->Module, VerifyKernelPtx, 0, nullptr, nullptr),
      "cuModuleLoadDataEx (the verification kernel)"));
  R3_TRY(check(A.cuModuleGetFunction(&D->Kernel, D->Module, ScanKernelName),
               "cuModuleGetFunction (the verification kernel)"));
  D->Stream = S;
  D->MaxBlocks = 8 * std::max(1u, Multiprocessors);
  return D;
}

CudaScans::~CudaScans() {
  if (Results)
    api().cuMemFree(Results);
  if (Module)
    api().cuModuleUnload(Module);
}

Expected<std::vector<scan::Result>>
CudaScans::scan(const std::vector<scan::Op> &Ops) {
  const Api &A = api();
  size_t N = Ops.size();
  if (N > Capacity) {
    if (Results)
      A.cuMemFree(Results);
    Results = 0;
    Capacity = 0;
    R3_TRY(check(A.cuMemAlloc(&Results, 16 * N), "cuMemAlloc"));
    Capacity = N;
  }
  CUdeviceptr Counts = Results, Firsts = Results + 8 * Capacity;
  R3_TRY(check(A.cuMemsetD8Async(Counts, 0, 8 * N, Stream), "cuMemsetD8Async"));
  R3_TRY(
      check(A.cuMemsetD8Async(Firsts, 0xff, 8 * N, Stream), "cuMemsetD8Async"));
  for (size_t I = 0; I < N; ++I) {
    scan::Op O = Ops[I];
    if (O.From >= O.Units)
      continue;
    // One thread per 16 bytes (the scan's wide pieces), 256 a block.
    uint64_t Bytes = (O.Units - O.From) * scan::unitBytes(O.UnitKind);
    uint64_t Blocks = std::clamp<uint64_t>((Bytes + 4095) / 4096, 1, MaxBlocks);
    CUdeviceptr Count = Counts + 8 * I, First = Firsts + 8 * I;
    void *Params[] = {&O, &Count, &First};
    R3_TRY(check(A.cuLaunchKernel(Kernel, static_cast<unsigned>(Blocks), 1, 1,
                                  256, 1, 1, 0, Stream, Params, nullptr),
                 "cuLaunchKernel (the verification kernel)"));
  }
  R3_TRY(check(A.cuStreamSynchronize(Stream),
               "cuStreamSynchronize (the verification kernel)"));
  std::vector<uint64_t> Host(2 * Capacity);
  R3_TRY(check(A.cuMemcpyDtoH(Host.data(), Results, 16 * Capacity),
               "cuMemcpyDtoH"));
  std::vector<scan::Result> Out(N);
  for (size_t I = 0; I < N; ++I)
    Out[I] = {Host[I], Host[Capacity + I]};
  return Out;
}

Error CudaScans::read(uint64_t At, std::span<uint8_t> To) {
  if (To.empty())
    return Error::success();
  R3_TRY(check(api().cuStreamSynchronize(Stream), "cuStreamSynchronize"));
  return check(api().cuMemcpyDtoH(To.data(), At, To.size()), "cuMemcpyDtoH");
}

} // namespace r3::cuda
