// Texture and surface objects and references, which the capture cannot hold:
// a texture object is a handle to a descriptor the driver keeps (the array or
// linear memory behind it, filtering, addressing, normalization), and a
// replay has no way to rebuild it from the bytes of a parameter. So the
// injection library tracks the live handles (cuTexObjectCreate/Destroy,
// cuSurfObjectCreate/Destroy) and the modules whose texture or surface
// references the application looked up (cuModuleGetTexRef/SurfRef), and a
// selected launch that passes a live handle as an 8-byte parameter, or whose
// module has references, is refused with a message saying which.
//
// A parameter that merely equals a live handle's value (handles are small
// integers) is refused too: a false refusal says why, where a missed texture
// would be a capture that replays wrong.
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
/// is one of Handles, or none.
std::optional<size_t> textureParam(const std::vector<ParamInfo> &Layout,
                                   std::span<const uint8_t> Buffer,
                                   const std::set<uint64_t> &Handles);

} // namespace r3::cuda
