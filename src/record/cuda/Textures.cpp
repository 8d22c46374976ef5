// Texture and surface tracking from driver API callbacks.
#include "record/cuda/Textures.h"

#include <cupti.h> // its generated_cuda_meta.h: the parameter structs

#include <cstring>

namespace r3::cuda {

namespace {
template <typename P> const P &as(const void *Params) {
  return *static_cast<const P *>(Params);
}
} // namespace

const std::vector<CUpti_CallbackId> &TextureTable::callbacks() {
  static const std::vector<CUpti_CallbackId> Ids = {
      CUPTI_DRIVER_TRACE_CBID_cuTexObjectCreate,
      CUPTI_DRIVER_TRACE_CBID_cuTexObjectDestroy,
      CUPTI_DRIVER_TRACE_CBID_cuSurfObjectCreate,
      CUPTI_DRIVER_TRACE_CBID_cuSurfObjectDestroy,
      CUPTI_DRIVER_TRACE_CBID_cuModuleGetTexRef,
      CUPTI_DRIVER_TRACE_CBID_cuModuleGetSurfRef,
  };
  return Ids;
}

void TextureTable::onApiExit(CUpti_CallbackId Cbid, const void *Params,
                             CUresult Result) {
  if (Result != CUDA_SUCCESS)
    return;
  std::lock_guard<std::mutex> L(Lock);
  switch (Cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuTexObjectCreate:
    Objects.insert(*as<cuTexObjectCreate_params>(Params).pTexObject);
    return;
  case CUPTI_DRIVER_TRACE_CBID_cuTexObjectDestroy:
    Objects.erase(as<cuTexObjectDestroy_params>(Params).texObject);
    return;
  case CUPTI_DRIVER_TRACE_CBID_cuSurfObjectCreate:
    Objects.insert(*as<cuSurfObjectCreate_params>(Params).pSurfObject);
    return;
  case CUPTI_DRIVER_TRACE_CBID_cuSurfObjectDestroy:
    Objects.erase(as<cuSurfObjectDestroy_params>(Params).surfObject);
    return;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleGetTexRef:
    ReferenceModules.insert(as<cuModuleGetTexRef_params>(Params).hmod);
    return;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleGetSurfRef:
    ReferenceModules.insert(as<cuModuleGetSurfRef_params>(Params).hmod);
    return;
  default:
    return;
  }
}

std::set<uint64_t> TextureTable::liveObjects() const {
  std::lock_guard<std::mutex> L(Lock);
  return Objects;
}

bool TextureTable::hasReferences(CUmodule M) const {
  std::lock_guard<std::mutex> L(Lock);
  return ReferenceModules.count(M) != 0;
}

std::optional<size_t> textureParam(const std::vector<ParamInfo> &Layout,
                                   std::span<const uint8_t> Buffer,
                                   const std::set<uint64_t> &Handles) {
  if (Handles.empty())
    return std::nullopt;
  for (size_t I = 0; I < Layout.size(); ++I) {
    const ParamInfo &P = Layout[I];
    if (P.Size != 8 || P.Offset + 8 > Buffer.size())
      continue;
    uint64_t V = 0;
    std::memcpy(&V, Buffer.data() + P.Offset, 8);
    if (Handles.count(V))
      return I;
  }
  return std::nullopt;
}

} // namespace r3::cuda
