// Inline SVG charts for the HTML report. The page must open anywhere, offline
// and years later, so it carries no script library and fetches nothing: the
// charts are drawn here as SVG elements, with native <title> tooltips. Every
// string that reaches the output goes through escape(), since chart labels
// come from the history (kernel names, operators, LLM output).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace r3::svg {

/// Text escaped for HTML and XML, in element text and quoted attribute
/// values alike: & < > " ' become entities.
std::string escape(std::string_view Text);

/// How a value is labelled: on an axis, Step is the distance between ticks
/// (labels must tell neighbours apart); in a tooltip it is 0.
using TickFormat = std::string (*)(double Value, double Step);

/// A short label: "0.25", "1.5", "1200", "3.2e+05".
std::string formatNumber(double V, double Step = 0);
/// Seconds as "45 s", "1.5 s", or on a clock past two minutes: "12:05",
/// "1:58:20".
std::string formatSeconds(double S, double Step = 0);
/// Milliseconds with three significant digits: "1.25 ms", "12.5 us".
std::string formatMs(double Ms, double Step = 0);

/// About N round values (steps of 1, 2 or 5 times a power of ten, and at
/// least MinStep) from Lo to Hi.
std::vector<double> niceTicks(double Lo, double Hi, int N, double MinStep = 0);

/// The colour of category I in the report's palette.
const char *paletteColor(size_t I);

struct Point {
  double X = 0, Y = 0;
};

enum class SeriesStyle {
  Step, ///< a staircase (best so far)
  Dots  ///< one dot per point
};

struct Series {
  std::string Name, Color;
  SeriesStyle Style = SeriesStyle::Step;
  std::vector<Point> Points;
};

/// Lines and dots over two linear axes, with an optional dashed reference
/// line (the baseline). Points above YMax, when it is set, are drawn at the
/// top edge as hollow dots.
struct XYChart {
  std::string Id, Title, XLabel, YLabel;
  std::vector<Series> Lines;
  std::optional<double> Reference;
  std::string ReferenceLabel;
  std::optional<double> YMax;
  double XMinStep = 0; ///< 1 for counts on X (evaluations)
  TickFormat XFormat = formatNumber, YFormat = formatNumber;
};
std::string xyChart(const XYChart &C);

/// Horizontal bars of factors on a log scale around 1: a factor above 1
/// grows right, one below 1 left.
struct FactorBar {
  std::string Label;
  double Factor = 1;
  bool Total = false; ///< the product of the others, drawn apart
};
std::string factorBars(const std::string &Id, const std::string &Title,
                       const std::vector<FactorBar> &Bars);

/// Stacked columns: per bin of X, a count per category.
struct StackedColumns {
  std::string Id, Title, XLabel;
  std::vector<std::string> Categories, Colors;
  double XStart = 0, BinWidth = 1;
  std::vector<std::vector<uint64_t>> Counts; ///< [bin][category]
  TickFormat XFormat = formatNumber;
};
std::string stackedColumns(const StackedColumns &C);

/// A grid of cells coloured by value (lower is better: darker), each with a
/// tooltip; empty cells are pale.
struct HeatCell {
  size_t Row = 0, Col = 0;
  double Value = 0;
  std::string Tooltip;
  bool Marked = false; ///< outlined (the kernel's best)
};
struct HeatMap {
  std::string Id, Title, XLabel, YLabel;
  std::vector<std::string> RowNames, ColNames;
  std::vector<HeatCell> Cells;
  double Min = 0, Max = 1; ///< the colour scale's range
};
std::string heatMap(const HeatMap &H);

} // namespace r3::svg
