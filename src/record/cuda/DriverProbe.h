// Why a CUDA application recorded nothing: the driver loads r3's injection
// library at cuInit, so an application that ends without a word on the
// record stream either never reached cuInit or ran where the driver cannot
// start. `r3 record` asks the driver itself, only after such a run (the
// parent never uses CUDA otherwise), loading libcuda.so.1 with dlopen so that
// r3 runs, and says so, on machines without it.
#pragma once

#include "support/Error.h"

namespace r3 {

/// Success when the CUDA driver loads and cuInit(0) succeeds; otherwise an
/// error "no CUDA device is available (...)" with the loader's or the
/// driver's own words.
Error probeCudaDriver();

} // namespace r3
