// Internal to the HTML report (Html*.cpp): what a kernel's section is
// drawn from, the table writer, and the sections kept in files of their own.
#pragma once

#include "campaign/Campaign.h"
#include "history/History.h"
#include "replay/Speedup.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace r3::report::html {

/// What a kernel's section draws: its part of the report, and the rows of
/// the history the report does not carry.
struct KernelData {
  const nlohmann::json *Report = nullptr;
  size_t Index = 0;
  std::vector<EvaluatedCandidate> Evaluations;
  std::vector<LlmCallRow> Calls;
  std::vector<ArchiveRow> Archive;
  std::vector<VariantRow> Variants;
  const KernelSpec *Spec = nullptr;
  /// The baseline and speedup rule's view of the kernel, for times drawn
  /// beside the report's baseline (KernelTimes::comparable).
  KernelTimes Times;
  const nlohmann::json &report() const { return *Report; }
  std::string id(const std::string &Chart) const {
    return "k" + std::to_string(Index) + "-" + Chart;
  }
};

/// A table of plain-text cells (escaped when written). Kinds has one letter
/// per column: 't' text, 'n' a number (right-aligned), 'p' preformatted.
struct Table {
  std::vector<std::string> Head;
  std::string Kinds;
  std::vector<std::vector<std::string>> Rows;
};

/// The table as HTML, each cell escaped.
std::string tableHtml(const Table &T, const std::string &Class);
/// A paragraph saying why a part is missing.
std::string note(const std::string &Text);
/// A JSON number, if it is one.
std::optional<double> number(const nlohmann::json &J);
/// A JSON value as text: strings as they are, null as "-".
std::string text(const nlohmann::json &J);

/// The MAP-Elites archive: a heat map per island on the campaign's
/// descriptor axes (C), else on the descriptor values stored with each elite.
std::string archiveSection(const KernelData &D,
                           const std::optional<Campaign> &C);

} // namespace r3::report::html
