// `r3 export`'s writing of a kernel's best, for the commands that build on it
// (`r3 run --use` applies exported kernels).
#pragma once

#include "history/History.h"
#include "support/Error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace r3::cli {

/// Writes the best verified candidate of Kernel in H into Dir (created;
/// existing files replaced), as `r3 export` does, and returns its settings
/// (settings.json's object; docs/export.md lists the keys).
Expected<nlohmann::ordered_json>
exportBest(History &H, const std::string &Kernel, const std::string &Dir);

} // namespace r3::cli
