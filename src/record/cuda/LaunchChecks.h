// The decisions a selected launch goes through before its memory is copied,
// as pure functions of what the injection library tracked, so that they are
// tested without a driver: the device it ran on against the capture's, the
// textures and surfaces it may read (from its cubin, its parameters and the
// references looked up), and what the capture warns about (managed memory,
// which a replay maps as plain device memory).
#pragma once

#include "cubin/CubinTextures.h"
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

/// What the injection library knows about a selected launch's textures and
/// surfaces.
struct TextureFacts {
  /// The application looked up texture or surface references of the
  /// kernel's module (cuModuleGetTexRef, cuModuleGetSurfRef).
  bool ModuleReferences = false;
  /// What the kernel's cubin says (CubinTextures.h), when it could be read.
  std::optional<CubinTextureUse> Cubin;
  /// Why it could not, otherwise.
  std::string CubinError;
  /// The first 8-byte parameter (0-based) whose value is a live texture or
  /// surface object's handle (textureParam).
  std::optional<size_t> HandleParam;
};

/// The refusal of a launch of Kernel that reads textures or surfaces, or
/// success. Refused: a module with looked-up references; a kernel whose cubin
/// says it uses textures or surfaces (bank attributes, instructions in its
/// code or in a separately compiled device function of its module). When the
/// cubin says it uses none, a parameter that equals a live handle is an
/// integer that happens to, and the launch is recorded. Only when the code
/// could not be read (no cubin, an architecture not decoded) is such a
/// parameter taken for a handle. Messages count parameters from 1, as the
/// host backend's messages count arguments.
Error checkTextures(const std::string &Kernel, const TextureFacts &F);

/// The warning for a recorded launch that can reach managed memory, or none.
std::optional<std::string>
managedWarning(const std::vector<DeviceAllocation> &Regions, uint64_t Ordinal,
               const std::string &Kernel);

} // namespace r3::cuda
