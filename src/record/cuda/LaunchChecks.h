// The decisions a selected launch goes through before its memory is copied,
// as pure functions of what the injection library tracked, so that they are
// tested without a driver: the device it ran on against the capture's, the
// texture and surface objects it may read, and what the capture warns about
// (managed memory, which a replay maps as plain device memory).
#pragma once

#include "record/cuda/DeviceMemory.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3::cuda {

/// No device recorded yet.
inline constexpr int NoDevice = -1;

/// A capture holds one device's memory: the launch Ordinal of Kernel ran on
/// Device, and is refused when the capture already records another one.
Error checkDevice(int CaptureDevice, int Device, uint64_t Ordinal,
                  const std::string &Kernel);

/// The refusal of a kernel that reads a texture or surface object through
/// parameter Param (0-based; the message counts from 1, as the host
/// backend's messages count arguments).
Error textureObjectRefusal(const std::string &Kernel, size_t Param);
/// The refusal of a kernel whose module has texture or surface references
/// the application looked up.
Error textureReferenceRefusal(const std::string &Kernel);

/// The warning for a recorded launch that can reach managed memory, or none.
std::optional<std::string>
managedWarning(const std::vector<DeviceAllocation> &Regions, uint64_t Ordinal,
               const std::string &Kernel);

} // namespace r3::cuda
