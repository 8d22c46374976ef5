// __launch_bounds__ as r3 varies it: the one parse rule of its text ("T" or
// "T,B": T threads per block, 1 to 1024; B blocks per multiprocessor), which
// the campaign file, the worker, `r3 compile`/`r3 replay --launch-bounds`
// and `r3 export` all use. Header-only and free of CUDA and LLVM, so that
// the campaign file's parser (r3_campaign_io) can use it.
#pragma once

#include "support/StringUtil.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace r3 {

/// __launch_bounds__(MaxThreads, MinBlocks) applied to the kernel's IR;
/// MinBlocks 0: none.
struct LaunchBoundsSpec {
  uint32_t MaxThreads = 0;
  uint32_t MinBlocks = 0;
  bool operator==(const LaunchBoundsSpec &) const = default;
};

/// "T" or "T,B" as a spec; none for "" (no bounds). The error says what was
/// expected and got.
inline Expected<std::optional<LaunchBoundsSpec>>
parseLaunchBounds(std::string_view Text) {
  if (Text.empty())
    return std::optional<LaunchBoundsSpec>();
  size_t Comma = Text.find(',');
  auto T = parseInteger(Text.substr(0, Comma), 1, 1024);
  auto B = Comma == std::string_view::npos
               ? Expected<int64_t>(0)
               : parseInteger(Text.substr(Comma + 1), 1, 1024);
  if (!T || !B)
    return makeError("launch bounds must be \"T\" or \"T,B\" (T threads per "
                     "block, 1 to 1024; B blocks per multiprocessor, 1 to "
                     "1024), got ",
                     quoteShort(Text));
  return std::optional<LaunchBoundsSpec>(
      LaunchBoundsSpec{static_cast<uint32_t>(*T), static_cast<uint32_t>(*B)});
}

} // namespace r3
