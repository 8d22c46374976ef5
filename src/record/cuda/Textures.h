// Texture and surface objects and references, which the capture cannot hold:
// a texture object is a handle to a descriptor the driver keeps (the array or
// linear memory behind it, filtering, addressing, normalization), and a
// replay has no way to rebuild it from the bytes of a parameter. So the
// injection library tracks the live handles (cuTexObjectCreate/Destroy,
// cuSurfObjectCreate/Destroy) and the modules whose texture or surface
// references the application looked up (cuModuleGetTexRef/SurfRef).
//
// Whether a selected launch reads textures is decided from its kernel's cubin
// (CubinTextures.h: texture and surface instructions, bank attributes), which
// also sees handles passed inside structs or loaded from memory; a parameter
// equal to a live handle then only names the parameter in the refusal, and in
// a kernel without texture code it is an integer that happens to equal a
// handle (handles are small integers), which is recorded. Only when the code
// cannot be read (not a cubin, an architecture not decoded) does a parameter
// equal to a live handle refuse the launch, as before: a false refusal says
// why, where a missed texture would be a capture that replays wrong
// (LaunchChecks.h has the rules).
#pragma once

#include "capture/Capture.h"

#include <cupti.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <vector>

namespace r3::cuda {

class TextureTable {
public:
  /// Updates the table from a driver API call that returned Result; other
  /// calls are ignored.
  void onApiExit(CUpti_CallbackId Cbid, const void *Params, CUresult Result);
  /// The live texture and surface object handles.
  std::set<uint64_t> liveObjects() const;
  /// Whether the application looked up a texture or surface reference of M.
  bool hasReferences(CUmodule M) const;
  /// The driver callbacks onApiExit understands.
  static const std::vector<CUpti_CallbackId> &callbacks();

private:
  mutable std::mutex Lock;
  std::set<uint64_t> Objects;
  std::set<CUmodule> ReferenceModules;
};

/// The index of the first 8-byte parameter of Layout whose value in Buffer
/// is one of Handles, or none: the parameter a refusal names, or, where the
/// kernel's code cannot be read, the evidence of a texture.
std::optional<size_t> textureParam(const std::vector<ParamInfo> &Layout,
                                   std::span<const uint8_t> Buffer,
                                   const std::set<uint64_t> &Handles);

} // namespace r3::cuda
