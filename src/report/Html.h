// `r3 report --format html`: the campaign as one self-contained page.
#pragma once

#include "history/History.h"
#include "support/Error.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace r3::report {

/// The page for a history whose report (reportJson) is Report: per kernel,
/// the best time over evaluations and over time, the speedup by level and by
/// operator, the MAP-Elites archive, failures over time, the LLM's calls and
/// the best settings. It loads nothing: CSS, SVG and its one script are
/// inline, and its content security policy forbids anything else.
Expected<std::string> reportHtml(History &H, const nlohmann::json &Report);

} // namespace r3::report
