// SVG charts drawn as text: each chart is one <svg class="chart"> with a
// viewBox (the page's CSS scales it), a title, axes with round ticks, and a
// <title> per mark for the tooltip.
#include "report/Svg.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace r3::svg {

namespace {
constexpr double Width = 600, Height = 280;
constexpr double Left = 70, Right = 16, Top = 46, Bottom = 46;

[[gnu::format(printf, 1, 2)]] std::string fmt(const char *Format, ...) {
  char Buf[512];
  va_list Args;
  va_start(Args, Format);
  int N = std::vsnprintf(Buf, sizeof Buf, Format, Args);
  va_end(Args);
  return std::string(Buf, std::clamp(N, 0, int(sizeof Buf) - 1));
}

/// A linear map from [Lo, Hi] to pixels [P0, P1].
struct Scale {
  double Lo, Hi, P0, P1;
  double MinStep = 0; ///< between ticks (1: whole numbers only)
  double operator()(double V) const {
    return Hi > Lo ? P0 + (V - Lo) / (Hi - Lo) * (P1 - P0) : (P0 + P1) / 2;
  }
};

/// Charts scale with the page; a heat map keeps its cells' size.
enum class Sizing { Scaled, Fixed };

std::string open(const std::string &Id, const std::string &Title, double W,
                 double H, Sizing S = Sizing::Scaled) {
  bool Fixed = S == Sizing::Fixed;
  std::string Size = Fixed ? fmt(" width=\"%.0f\" height=\"%.0f\"", W, H) : "";
  return fmt("<svg class=\"chart%s\" id=\"%s\" viewBox=\"0 0 %.0f %.0f\"%s "
             "role=\"img\" aria-label=\"%s\" "
             "xmlns=\"http://www.w3.org/2000/svg\">\n",
             Fixed ? " fixed" : "", escape(Id).c_str(), W, H, Size.c_str(),
             escape(Title).c_str()) +
         fmt("<text class=\"title\" x=\"%.0f\" y=\"18\">", Left) +
         escape(Title) + "</text>\n";
}

std::string text(double X, double Y, const std::string &Anchor,
                 const std::string &Class, const std::string &Body) {
  return fmt("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", X,
             Y, Anchor.c_str(), Class.c_str()) +
         escape(Body) + "</text>\n";
}

using LegendItems = std::vector<std::pair<std::string, std::string>>;

/// Coloured squares with names under the title, wrapping at the chart's
/// width; Bottom is where the plot may start.
struct Legend {
  std::string Svg;
  double Bottom = 0;
};

Legend legend(const LegendItems &Items) {
  Legend L;
  double X = Left, Y = 36;
  for (const auto &[Name, Color] : Items) {
    double W = 24 + 6.5 * double(Name.size());
    if (X > Left && X + W > Width - Right) {
      X = Left;
      Y += 15;
    }
    L.Svg += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" "
                 "fill=\"%s\"/>",
                 X, Y - 9, escape(Color).c_str());
    L.Svg += text(X + 14, Y, "start", "legend", Name);
    X += W;
  }
  L.Bottom = Y + 10;
  return L;
}

double stepOf(const std::vector<double> &Ticks) {
  return Ticks.size() > 1 ? Ticks[1] - Ticks[0] : 0;
}

std::string xAxis(const Scale &X, double Y0, TickFormat Format,
                  const std::string &Label) {
  std::string Out = fmt("<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" "
                        "x2=\"%.1f\" y2=\"%.1f\"/>\n",
                        X.P0, Y0, X.P1, Y0);
  std::vector<double> Ticks = niceTicks(X.Lo, X.Hi, 6, X.MinStep);
  for (double T : Ticks) {
    double P = X(T);
    Out += fmt("<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
               "y2=\"%.1f\"/>",
               P, Y0, P, Y0 + 4);
    // A label at the right edge ends there rather than past it.
    Out += text(P, Y0 + 16, P > X.P1 - 24 ? "end" : "middle", "tick",
                Format(T, stepOf(Ticks)));
  }
  return Out + text((X.P0 + X.P1) / 2, Height - 8, "middle", "label", Label);
}

std::string yAxis(const Scale &Y, double X0, double X1, TickFormat Format,
                  const std::string &Label) {
  std::string Out;
  std::vector<double> Ticks = niceTicks(Y.Lo, Y.Hi, 5, Y.MinStep);
  for (double T : Ticks) {
    double P = Y(T);
    Out += fmt("<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
               "y2=\"%.1f\"/>",
               X0, P, X1, P);
    Out += text(X0 - 6, P + 4, "end", "tick", Format(T, stepOf(Ticks)));
  }
  Out += fmt("<text class=\"label\" transform=\"translate(14 %.1f) "
             "rotate(-90)\" text-anchor=\"middle\">",
             (Y.P0 + Y.P1) / 2) +
         escape(Label) + "</text>\n";
  return Out;
}

/// The data's extent, widened where it is a single value.
std::pair<double, double> extent(const std::vector<double> &Vs, double Pad) {
  if (Vs.empty())
    return {0, 1};
  auto [Lo, Hi] = std::minmax_element(Vs.begin(), Vs.end());
  double A = *Lo, B = *Hi;
  if (!(B > A)) {
    double D = A != 0 ? std::fabs(A) * 0.1 : 1;
    return {A - D, B + D};
  }
  return {A - (B - A) * Pad, B + (B - A) * Pad};
}

std::string stepPath(const Series &S, const Scale &X, const Scale &Y) {
  std::string D;
  for (size_t I = 0; I < S.Points.size(); ++I) {
    double Px = X(S.Points[I].X), Py = Y(S.Points[I].Y);
    D += I == 0 ? fmt("M%.1f %.1f", Px, Py) : fmt("H%.1fV%.1f", Px, Py);
  }
  return fmt("<path class=\"step\" fill=\"none\" stroke=\"%s\" d=\"",
             escape(S.Color).c_str()) +
         D + "\"><title>" + escape(S.Name) + "</title></path>\n";
}

std::string dots(const Series &S, const Scale &X, const Scale &Y,
                 const XYChart &C) {
  std::string Out = "<g class=\"dots\">";
  for (const Point &P : S.Points) {
    bool Clipped = C.YMax && P.Y > *C.YMax;
    double Py = Y(Clipped ? *C.YMax : P.Y);
    Out += fmt("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" %s=\"%s\"%s>", X(P.X),
               Py, Clipped ? "stroke" : "fill", escape(S.Color).c_str(),
               Clipped ? " fill=\"none\"" : "");
    Out += "<title>" + escape(S.Name + ": " + C.YFormat(P.Y, 0)) +
           "</title></circle>";
  }
  return Out + "</g>\n";
}

Scale yScaleOf(const XYChart &C, double Top) {
  std::vector<double> Ys;
  for (const Series &S : C.Lines)
    for (const Point &P : S.Points)
      Ys.push_back(C.YMax ? std::min(P.Y, *C.YMax) : P.Y);
  if (C.Reference)
    Ys.push_back(*C.Reference);
  auto [Lo, Hi] = extent(Ys, 0.06);
  return {std::max(0.0, Lo), Hi, Height - Bottom, Top};
}

Scale xScaleOf(const XYChart &C) {
  std::vector<double> Xs;
  for (const Series &S : C.Lines)
    for (const Point &P : S.Points)
      Xs.push_back(P.X);
  auto [Lo, Hi] = extent(Xs, 0.02);
  return {Lo, Hi, Left, Width - Right};
}

/// The colour of T in [0, 1] from dark green (0, the best) to pale yellow.
std::string heatColor(double T) {
  T = std::clamp(std::isnan(T) ? 0.0 : T, 0.0, 1.0);
  auto Mix = [T](int A, int B) { return int(A + (B - A) * T + 0.5); };
  return fmt("#%02x%02x%02x", Mix(0x1b, 0xf6), Mix(0x78, 0xe8),
             Mix(0x5e, 0xa6));
}
} // namespace

std::string escape(std::string_view Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (char C : Text) {
    switch (C) {
    case '&':
      Out += "&amp;";
      break;
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '"':
      Out += "&quot;";
      break;
    case '\'':
      Out += "&#39;";
      break;
    default:
      Out += C;
    }
  }
  return Out;
}

std::string formatNumber(double V, double Step) {
  double A = std::fabs(V);
  if (A != 0 && (A >= 1e5 || A < 1e-3))
    return fmt("%.2g", V);
  // Enough digits to tell ticks Step apart.
  int Digits = Step > 0 ? std::max(0, -int(std::floor(std::log10(Step)))) : -1;
  if (Digits >= 0 && Digits < 6)
    return fmt("%.*f", Digits, V);
  return fmt("%.4g", V);
}

std::string formatSeconds(double S, double Step) {
  if (Step > 0 && Step < 1)
    return formatNumber(S, Step) + " s";
  if (std::fabs(S) < 120)
    return fmt("%.0f s", S);
  long T = std::lround(S), H = T / 3600, M = T / 60 % 60, Sec = T % 60;
  return H > 0 ? fmt("%ld:%02ld:%02ld", H, M, Sec) : fmt("%ld:%02ld", M, Sec);
}

std::string formatMs(double Ms, double) {
  if (std::fabs(Ms) >= 1000)
    return fmt("%.3g s", Ms / 1000);
  if (std::fabs(Ms) >= 1 || Ms == 0)
    return fmt("%.3g ms", Ms);
  if (std::fabs(Ms) >= 1e-3)
    return fmt("%.3g us", Ms * 1e3);
  return fmt("%.3g ns", Ms * 1e6);
}

std::vector<double> niceTicks(double Lo, double Hi, int N, double MinStep) {
  if (!(Hi > Lo) || N < 1 || !std::isfinite(Lo) || !std::isfinite(Hi))
    return {Lo};
  double Raw = (Hi - Lo) / N, Mag = std::pow(10, std::floor(std::log10(Raw)));
  double Step = Mag;
  for (double M : {1.0, 2.0, 5.0, 10.0})
    if (M * Mag >= Raw) {
      Step = M * Mag;
      break;
    }
  Step = std::max(Step, MinStep);
  std::vector<double> Out;
  for (double T = std::ceil(Lo / Step) * Step; T <= Hi + Step * 1e-9; T += Step)
    Out.push_back(std::fabs(T) < Step * 1e-9 ? 0 : T);
  return Out;
}

const char *paletteColor(size_t I) {
  static const char *Colors[] = {"#d1495b", "#edae49", "#00798c", "#30638e",
                                 "#8f2d56", "#6a994e", "#b07aa1", "#7f7f7f",
                                 "#e07a5f", "#3d405b", "#81b29a"};
  return Colors[I % std::size(Colors)];
}

std::string xyChart(const XYChart &C) {
  LegendItems Items;
  for (const Series &S : C.Lines)
    Items.push_back({S.Name, S.Color});
  if (C.Reference)
    Items.push_back({C.ReferenceLabel, "#555555"});
  Legend L = legend(Items);
  Scale X = xScaleOf(C), Y = yScaleOf(C, L.Bottom);
  X.MinStep = C.XMinStep;
  std::string Out = open(C.Id, C.Title, Width, Height) + L.Svg;
  Out += yAxis(Y, Left, Width - Right, C.YFormat, C.YLabel);
  Out += xAxis(X, Height - Bottom, C.XFormat, C.XLabel);
  if (C.Reference)
    Out += fmt("<line class=\"reference\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
               "y2=\"%.1f\"><title>",
               Left, Y(*C.Reference), Width - Right, Y(*C.Reference)) +
           escape(C.ReferenceLabel + ": " + C.YFormat(*C.Reference, 0)) +
           "</title></line>\n";
  for (const Series &S : C.Lines)
    Out += S.Style == SeriesStyle::Step ? stepPath(S, X, Y) : dots(S, X, Y, C);
  return Out + "</svg>\n";
}

std::string factorBars(const std::string &Id, const std::string &Title,
                       const std::vector<FactorBar> &Bars) {
  const double Row = 26, LabelW = 130, H = Top + Row * double(Bars.size()) + 8;
  double MaxLog = std::log2(1.1), MinLog = 0;
  for (const FactorBar &B : Bars) {
    MaxLog = std::max(MaxLog, std::log2(B.Factor));
    MinLog = std::min(MinLog, std::log2(B.Factor));
  }
  // Room on the right of the longest bar for its label.
  Scale X{MinLog, MaxLog, LabelW + 8, Width - 70};
  std::string Out = open(Id, Title, Width, H);
  Out += fmt("<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
             "y2=\"%.1f\"/>\n",
             X(0), Top - 6, X(0), H - 4);
  for (size_t I = 0; I < Bars.size(); ++I) {
    const FactorBar &B = Bars[I];
    double Y = Top + Row * double(I), L = std::log2(B.Factor);
    double X0 = std::min(X(0), X(L)), X1 = std::max(X(0), X(L));
    std::string Label = fmt("%.2fx", B.Factor);
    Out += text(LabelW, Y + 13, "end", "label", B.Label);
    Out += fmt("<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
               "height=\"%.1f\"><title>",
               B.Total  ? "total"
               : L >= 0 ? "gain"
                        : "loss",
               X0, Y, std::max(1.0, X1 - X0), Row - 8) +
           escape(B.Label + ": " + Label) + "</title></rect>";
    Out += text(X1 + 6, Y + 13, "start", "value", Label);
  }
  return Out + "</svg>\n";
}

std::string stackedColumns(const StackedColumns &C) {
  uint64_t Max = 1;
  for (const auto &Bin : C.Counts) {
    uint64_t Sum = 0;
    for (uint64_t N : Bin)
      Sum += N;
    Max = std::max(Max, Sum);
  }
  double XEnd = C.XStart + C.BinWidth * double(C.Counts.size());
  Scale X{C.XStart, XEnd, Left, Width - Right};
  LegendItems Items;
  for (size_t K = 0; K < C.Categories.size(); ++K)
    Items.push_back({C.Categories[K], C.Colors[K]});
  Legend L = legend(Items);
  Scale Y{0, double(Max), Height - Bottom, L.Bottom, 1};
  std::string Out = open(C.Id, C.Title, Width, Height) + L.Svg;
  Out += yAxis(Y, Left, Width - Right, formatNumber, "count");
  Out += xAxis(X, Height - Bottom, C.XFormat, C.XLabel);
  for (size_t B = 0; B < C.Counts.size(); ++B) {
    double X0 = X(C.XStart + C.BinWidth * double(B)) + 1;
    double W = std::max(1.0, X(C.XStart + C.BinWidth * double(B + 1)) - X0 - 1);
    uint64_t Below = 0;
    for (size_t K = 0; K < C.Categories.size(); ++K) {
      uint64_t N = C.Counts[B][K];
      if (N == 0)
        continue;
      double Y1 = Y(double(Below)), Y0 = Y(double(Below + N));
      Out += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                 "fill=\"%s\"><title>",
                 X0, Y0, W, Y1 - Y0, escape(C.Colors[K]).c_str()) +
             escape(C.Categories[K] + ": " + std::to_string(N) + " from " +
                    C.XFormat(C.XStart + C.BinWidth * double(B), 0)) +
             "</title></rect>";
      Below += N;
    }
  }
  return Out + "</svg>\n";
}

namespace {
/// Where a heat map's cells go: square cells right of the row labels.
struct Grid {
  double LabelW = 90, Rows = 1, Cols = 1, Cell = 40;
  double x(double C) const { return LabelW + Cell * C; }
  double y(double R) const { return Top + Cell * R; }
  /// Column labels below the grid are tilted when cells are narrow.
  bool tilted() const { return Cell < 40; }
  double height() const { return y(Rows) + (tilted() ? 64 : 40); }
  double width() const { return std::max(320.0, x(Cols) + Right); }
};

std::string heatCells(const HeatMap &H, const Grid &G) {
  std::string Out;
  for (size_t R = 0; R < size_t(G.Rows); ++R)
    for (size_t C = 0; C < size_t(G.Cols); ++C)
      Out += fmt("<rect class=\"empty\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                 "height=\"%.1f\"/>",
                 G.x(double(C)), G.y(double(R)), G.Cell - 2, G.Cell - 2);
  for (const HeatCell &E : H.Cells) {
    double T = H.Max > H.Min ? (E.Value - H.Min) / (H.Max - H.Min) : 0;
    Out +=
        fmt("<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%.1f\" fill=\"%s\"><title>",
            E.Marked ? "cell best" : "cell", G.x(double(E.Col)),
            G.y(double(E.Row)), G.Cell - 2, G.Cell - 2, heatColor(T).c_str()) +
        escape(E.Tooltip) + "</title></rect>";
  }
  return Out;
}

std::string heatLabels(const HeatMap &H, const Grid &G) {
  std::string Out;
  for (size_t R = 0; R < H.RowNames.size(); ++R)
    Out += text(G.LabelW - 6, G.y(double(R) + 0.5) + 4, "end", "tick",
                H.RowNames[R]);
  for (size_t C = 0; C < H.ColNames.size(); ++C) {
    double X = G.x(double(C) + 0.5), Y = G.y(G.Rows) + 12;
    Out += G.tilted() ? fmt("<text class=\"tick\" text-anchor=\"end\" "
                            "transform=\"translate(%.1f %.1f) rotate(-45)\">",
                            X, Y) +
                            escape(H.ColNames[C]) + "</text>"
                      : text(X, Y, "middle", "tick", H.ColNames[C]);
  }
  Out += text(G.x(G.Cols / 2), G.height() - 4, "middle", "label", H.XLabel);
  return Out +
         fmt("<text class=\"label\" transform=\"translate(14 %.1f) "
             "rotate(-90)\" text-anchor=\"middle\">",
             G.y(G.Rows / 2)) +
         escape(H.YLabel) + "</text>\n";
}
} // namespace

std::string heatMap(const HeatMap &H) {
  Grid G;
  G.Cols = double(std::max<size_t>(1, H.ColNames.size()));
  G.Rows = double(std::max<size_t>(1, H.RowNames.size()));
  G.Cell = std::clamp((Width - G.LabelW - Right) / G.Cols, 8.0, 40.0);
  return open(H.Id, H.Title, G.width(), G.height(), Sizing::Fixed) +
         heatCells(H, G) + heatLabels(H, G) + "</svg>\n";
}

} // namespace r3::svg
