// The one place the injection library turns CUDA driver and CUPTI results into
// r3 errors, with the API's own name and text for the code, so that every
// message says which call failed and why ("cuMemcpyDtoH_v2: CUDA_ERROR_...:
// ..."). Also the few driver calls the library makes everywhere, wrapped once.
#pragma once

#include "support/Error.h"

#include <cuda.h>
#include <cupti.h>

#include <cstdint>
#include <string>

namespace r3::cuda {

/// Success, or an error "Call: NAME: description".
Error check(CUresult R, const char *Call);
Error check(CUptiResult R, const char *Call);

/// Waits for all work of the current context (the launch's context).
Error synchronize();

/// CUPTI's activity-buffer request callback: an 8 MiB buffer from
/// aligned_alloc, which the completion callback frees with std::free.
void CUPTIAPI requestActivityBuffer(uint8_t **Buffer, size_t *Size,
                                    size_t *MaxRecords);

/// Copies Size bytes at the unified address Src (device, managed or mapped
/// host memory) into host memory at Dst.
Error copyToHost(void *Dst, uint64_t Src, uint64_t Size);

/// The device ordinal of the current context.
Expected<int> currentDevice();

/// Pinned host memory for device-to-host copies; null with an error on failure.
Expected<void *> allocatePinned(uint64_t Size);
void freePinned(void *P);

} // namespace r3::cuda
