// The CUDA replay device: one GPU context owning a capture's memory at its
// recorded addresses; evaluates cubin candidates (CudaDevice.cpp).
#pragma once

#include "replay/Device.h"

#include <memory>

namespace r3 {
class CaptureReader;

/// Opens the GPU (the first visible device), checks it against the capture
/// and maps every recorded region at its recorded address. An error when
/// there is no driver or device, or an address range is taken.
Expected<std::unique_ptr<ReplayDevice>>
openCudaDevice(std::unique_ptr<CaptureReader> R);

} // namespace r3
