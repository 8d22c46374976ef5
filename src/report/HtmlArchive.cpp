// The MAP-Elites archive of the HTML report: one heat map per island, its
// cells the elites' fitness. The grid follows the campaign's descriptor axes
// (the cell index is row-major over them, Archive::cellOf), with knob values
// or bin ranges as labels; without the campaign file it is built from the
// distinct descriptor values the archive rows hold.
#include "report/HtmlParts.h"

#include "report/Svg.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <map>

namespace r3::report::html {

using nlohmann::json;
using svg::escape;

namespace {
// --- a kernel: the MAP-Elites archive ---

/// Where each archive row sits in the drawn grid, and the grid's names.
struct GridLayout {
  std::vector<std::string> RowNames, ColNames;
  std::string XLabel, YLabel;
  std::vector<std::pair<size_t, size_t>> Where; ///< per archive row
};

std::vector<std::string> binLabels(const search::DescriptorAxis &A,
                                   const KernelSpec *Spec) {
  unsigned Bins = std::max(1u, A.Bins);
  if (Spec && A.Name.starts_with("knob:"))
    for (const search::KnobDomain &K : Spec->Knobs)
      if (K.Name == A.Name.substr(5) && K.Values.size() == Bins)
        return K.Values;
  std::vector<std::string> Out;
  double W = (A.Max - A.Min) / Bins;
  for (unsigned I = 0; I < Bins; ++I)
    Out.push_back(svg::formatNumber(A.Min + W * I) + "-" +
                  svg::formatNumber(A.Min + W * (I + 1)));
  return Out;
}

/// The campaign's axes: the last one across, the others down (the cell
/// index is row-major over the axes). None when a cell does not fit them.
std::optional<GridLayout>
gridFromAxes(const std::vector<search::DescriptorAxis> &Axes,
             const KernelData &D) {
  if (Axes.empty())
    return std::nullopt;
  GridLayout G;
  G.ColNames = binLabels(Axes.back(), D.Spec);
  G.XLabel = Axes.back().Name;
  G.RowNames = {""};
  std::vector<std::string> Down;
  for (size_t A = 0; A + 1 < Axes.size(); ++A) {
    std::vector<std::string> Next, Labels = binLabels(Axes[A], D.Spec);
    for (const std::string &Prefix : G.RowNames)
      for (const std::string &L : Labels)
        Next.push_back(Prefix.empty() ? L : Prefix + " / " + L);
    G.RowNames = std::move(Next);
    Down.push_back(Axes[A].Name);
  }
  G.YLabel = join(Down, " / ");
  size_t Cols = G.ColNames.size();
  for (const ArchiveRow &R : D.Archive) {
    if (R.Cell < 0 || size_t(R.Cell) >= Cols * G.RowNames.size())
      return std::nullopt;
    G.Where.push_back({size_t(R.Cell) / Cols, size_t(R.Cell) % Cols});
  }
  return G;
}

/// Without the campaign's axes: one column per distinct value of the last
/// descriptor, one row per distinct combination of the others.
GridLayout gridFromValues(const KernelData &D) {
  std::vector<std::vector<double>> Ds;
  std::map<std::vector<double>, size_t> Rows;
  std::map<double, size_t> Cols;
  for (const ArchiveRow &R : D.Archive) {
    json J = json::parse(R.DescriptorJson, nullptr, false);
    std::vector<double> V;
    if (J.is_array())
      for (const json &X : J)
        V.push_back(X.is_number() ? X.get<double>() : 0);
    double Last = V.empty() ? 0 : V.back();
    if (!V.empty())
      V.pop_back();
    Rows[V] = 0;
    Cols[Last] = 0;
    V.push_back(Last);
    Ds.push_back(std::move(V));
  }
  GridLayout G;
  for (auto &[V, I] : Rows) {
    I = G.RowNames.size();
    std::vector<std::string> Parts;
    for (double X : V)
      Parts.push_back(svg::formatNumber(X));
    G.RowNames.push_back(join(Parts, " / "));
  }
  for (auto &[V, I] : Cols) {
    I = G.ColNames.size();
    G.ColNames.push_back(svg::formatNumber(V));
  }
  for (std::vector<double> &V : Ds) {
    double Last = V.back();
    V.pop_back();
    G.Where.push_back({Rows[V], Cols[Last]});
  }
  G.XLabel = "descriptor (last value)";
  G.YLabel = "descriptor (other values)";
  return G;
}

std::string elite(const KernelData &D, const ArchiveRow &R) {
  std::string Out = "island " + std::to_string(R.Island) + ", cell " +
                    std::to_string(R.Cell) + ": variant " +
                    std::to_string(R.VariantId);
  for (const VariantRow &V : D.Variants)
    if (V.Id == R.VariantId)
      Out += " (" + V.Operator + ") " + V.GenomeKey;
  return Out + "; fitness " + svg::formatMs(R.Fitness) + "; descriptor " +
         R.DescriptorJson;
}

} // namespace

std::string archiveSection(const KernelData &D,
                           const std::optional<Campaign> &C) {
  std::string Out = "<h3>MAP-Elites archive</h3>\n";
  if (D.Archive.empty())
    return Out + note("the archive is empty: no source level, or no variant "
                      "has finished its inner search yet");
  std::optional<GridLayout> G;
  if (C)
    G = gridFromAxes(C->Source.Descriptors, D);
  if (!G)
    G = gridFromValues(D);
  auto [Lo, Hi] = std::minmax_element(
      D.Archive.begin(), D.Archive.end(),
      [](const auto &A, const auto &B) { return A.Fitness < B.Fitness; });
  const json &Best = D.report()["best"];
  int64_t BestVariant = Best.is_null() || Best["variant"].is_null()
                            ? -1
                            : Best["variant"]["id"].get<int64_t>();
  std::map<int64_t, svg::HeatMap> Islands;
  for (size_t I = 0; I < D.Archive.size(); ++I) {
    const ArchiveRow &R = D.Archive[I];
    svg::HeatMap &H = Islands[R.Island];
    H.Cells.push_back({G->Where[I].first, G->Where[I].second, R.Fitness,
                       elite(D, R), R.VariantId == BestVariant});
  }
  Out += "<div class=\"charts\">\n";
  for (auto &[Island, H] : Islands) {
    H.Id = D.id("archive-island-" + std::to_string(Island));
    H.Title = "island " + std::to_string(Island) + ": elite fitness";
    H.RowNames = G->RowNames;
    H.ColNames = G->ColNames;
    H.XLabel = G->XLabel;
    H.YLabel = G->YLabel;
    H.Min = Lo->Fitness;
    H.Max = Hi->Fitness;
    Out += svg::heatMap(H);
  }
  return Out + "</div>\n<p class=\"meta\">" +
         escape(std::to_string(D.Archive.size()) + " elites from " +
                svg::formatMs(Lo->Fitness) + " (dark) to " +
                svg::formatMs(Hi->Fitness) +
                " (pale); the best candidate's variant is outlined") +
         "</p>\n";
}

} // namespace r3::report::html
