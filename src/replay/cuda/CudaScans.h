// The GPU as a ScanDevice (replay/DeviceVerify.h): the verification kernel
// (VerifyKernel.cu, built into r3 as PTX) runs each scan on the replay's
// stream; the counts come back in one copy of 16 bytes a scan.
#pragma once

#include "replay/DeviceVerify.h"

#include <cuda.h>

#include <memory>

namespace r3::cuda {

/// The verification kernel's name: CUPTI's kernel records of it are not the
/// candidate's (KernelTimer.cpp leaves them out).
inline constexpr const char *ScanKernelName = "r3_verify_scan";

class CudaScans final : public ScanDevice {
public:
  /// Loads the kernel into the current context; its scans run on S with at
  /// most 8 blocks of 256 threads per multiprocessor.
  static Expected<std::unique_ptr<CudaScans>> open(CUstream S,
                                                   uint32_t Multiprocessors);
  ~CudaScans() override;
  Expected<std::vector<scan::Result>>
  scan(const std::vector<scan::Op> &Ops) override;
  Error read(uint64_t At, std::span<uint8_t> To) override;

private:
  CudaScans() = default;
  CUmodule Module = nullptr;
  CUfunction Kernel = nullptr;
  CUstream Stream = nullptr;
  uint32_t MaxBlocks = 0;
  CUdeviceptr Results = 0; ///< counts, then lowest units: 2 x Capacity
  size_t Capacity = 0;
};

} // namespace r3::cuda
