// The CUDA replay device: one GPU context owning a capture's memory (mapped
// with the VMM API, relocated where the driver places it elsewhere);
// evaluates cubin candidates (CudaDevice.cpp).
#pragma once

#include "replay/Device.h"

#include <memory>

namespace r3 {
class CaptureReader;

/// Opens the GPU (the first visible device) and maps every recorded region
/// (DeviceSpace.h). An error when there is no driver or device, or the
/// memory cannot be mapped.
Expected<std::unique_ptr<ReplayDevice>>
openCudaDevice(std::unique_ptr<CaptureReader> R);

} // namespace r3
