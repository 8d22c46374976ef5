// CUDA driver and CUPTI result codes → r3 errors.
#include "record/cuda/Driver.h"

#include <cstdlib>

namespace r3::cuda {

Error check(CUresult R, const char *Call) {
  if (R == CUDA_SUCCESS)
    return Error::success();
  const char *Name = nullptr, *Text = nullptr;
  cuGetErrorName(R, &Name);
  cuGetErrorString(R, &Text);
  return makeError(Call, ": ", Name ? Name : "CUDA error",
                   Text ? std::string(": ") + Text : std::string(), " (",
                   int(R), ")");
}

Error check(CUptiResult R, const char *Call) {
  if (R == CUPTI_SUCCESS)
    return Error::success();
  const char *Text = nullptr;
  cuptiGetResultString(R, &Text);
  return makeError(Call, ": ", Text ? Text : "CUPTI error", " (", int(R), ")");
}

Error synchronize() { return check(cuCtxSynchronize(), "cuCtxSynchronize"); }

Error copyToHost(void *Dst, uint64_t Src, uint64_t Size) {
  // cuMemcpy infers both sides from their unified addresses, so one call
  // reads device, managed and mapped host memory alike (cuMemcpyDtoH wants a
  // device pointer).
  auto D = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(Dst));
  return check(cuMemcpy(D, static_cast<CUdeviceptr>(Src), Size), "cuMemcpy");
}

Expected<int> currentDevice() {
  CUdevice D = 0;
  R3_TRY(check(cuCtxGetDevice(&D), "cuCtxGetDevice"));
  return static_cast<int>(D);
}

Expected<void *> allocatePinned(uint64_t Size) {
  void *P = nullptr;
  R3_TRY(check(cuMemAllocHost(&P, Size), "cuMemAllocHost"));
  return P;
}

void freePinned(void *P) {
  if (P)
    cuMemFreeHost(P);
}

void CUPTIAPI requestActivityBuffer(uint8_t **Buffer, size_t *Size,
                                    size_t *MaxRecords) {
  constexpr size_t Bytes = 8u << 20;
  *Buffer = static_cast<uint8_t *>(std::aligned_alloc(8, Bytes));
  *Size = *Buffer ? Bytes : 0;
  *MaxRecords = 0;
}

} // namespace r3::cuda
