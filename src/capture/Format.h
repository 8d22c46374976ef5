// Names of the groups, datasets and attributes of the capture format, shared by
// the writer and the reader so that the two cannot drift apart.
#pragma once

#include "capture/Capture.h"

#include <string>

namespace r3::format {

inline constexpr const char *Magic = "r3-capture";
inline const std::string MagicAttr = "r3_format";
inline const std::string VersionAttr = "format_version";
inline const std::string CompleteAttr = "complete";
inline const std::string CountAttr = "count";

inline std::string modulePath(uint32_t M) {
  return "/modules/" + std::to_string(M);
}
inline std::string kernelPath(uint32_t K) {
  return "/kernels/" + std::to_string(K);
}
inline std::string launchPath(uint32_t L) {
  return "/launches/" + std::to_string(L);
}
inline std::string regionPath(uint32_t L, uint32_t R, Phase P) {
  return launchPath(L) + (P == Phase::Pre ? "/pre/region_" : "/post/region_") +
         std::to_string(R);
}

} // namespace r3::format
