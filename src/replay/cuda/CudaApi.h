// The replay server's CUDA driver, loaded at run time: r3 must start, compile
// and replay host captures on machines without an NVIDIA driver, so nothing
// links libcuda; the CUDA replay device opens libcuda.so.1 when a CUDA
// capture is opened and takes each entry point through cuGetProcAddress at
// the API version of the headers it was built with. This is the one place
// CUresult codes become r3 errors, with the driver's own name and text.
#pragma once

#include "support/Error.h"

#include <cuda.h>

namespace r3::cuda {

/// The driver entry points the replay device calls.
struct Api {
#define R3_CUDA_ENTRY(Name) decltype(&::Name) Name = nullptr;
#include "replay/cuda/CudaEntries.def"
#undef R3_CUDA_ENTRY
};

/// Loads libcuda.so.1 and every entry point, once per process; an error that
/// says what is missing ("no CUDA driver: libcuda.so.1: cannot open shared
/// object file ...") when it cannot.
Expected<const Api *> loadApi();

/// The loaded driver; only after loadApi() succeeded.
const Api &api();

/// Success, or the error "Call: CUDA_ERROR_NAME: description".
Error check(CUresult R, const char *Call);

/// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
std::string resultText(CUresult R);

/// Whether R leaves the context unusable: every later call fails with it, so
/// the server must be restarted (illegal address, trap, misaligned access,
/// launch failure).
bool isSticky(CUresult R);

} // namespace r3::cuda
