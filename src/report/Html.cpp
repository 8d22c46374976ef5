// `r3 report --format html`: one page a user can open offline, mail or keep
// beside a paper. It is drawn from the report's JSON (reportJson, the same
// figures as the table) and the rows of the history the JSON does not carry:
// every evaluation (for the curves and the failures over time), the LLM's
// calls, the MAP-Elites archive and the variants. Charts are inline SVG
// (Svg.h); the one script only counts them. Everything from the database is
// escaped, since it can hold LLM output; the content security policy lets
// nothing but the page's own script and styles run, should a string ever
// slip through.
#include "report/Html.h"

#include "report/Model.h"
#include "report/HtmlParts.h"
#include "support/Sha256.h"
#include "report/Svg.h"
#include "r3/Version.h"
#include "support/Machine.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <set>

namespace r3::report::html {

using nlohmann::json;
using svg::escape;

std::string tableHtml(const Table &T, const std::string &Class) {
  std::string Out = "<table class=\"" + Class + "\">\n<tr>";
  for (const std::string &H : T.Head)
    Out += "<th>" + escape(H) + "</th>";
  Out += "</tr>\n";
  for (const auto &Row : T.Rows) {
    Out += "<tr>";
    for (size_t I = 0; I < Row.size(); ++I) {
      char Kind = I < T.Kinds.size() ? T.Kinds[I] : 't';
      Out += Kind == 'n' ? "<td class=\"num\">" + escape(Row[I])
             : Kind == 'p' && !Row[I].empty()
                 ? "<td><pre class=\"reply\">" + escape(Row[I]) + "</pre>"
                 : "<td>" + escape(Row[I]);
      Out += "</td>";
    }
    Out += "</tr>\n";
  }
  return Out + "</table>\n";
}

std::string note(const std::string &Text) {
  return "<p class=\"note\">" + escape(Text) + "</p>\n";
}

std::optional<double> number(const json &J) {
  return J.is_number() ? std::optional<double>(J.get<double>()) : std::nullopt;
}

std::string text(const json &J) {
  if (J.is_null())
    return "-";
  return J.is_string() ? J.get<std::string>() : J.dump();
}

namespace {

constexpr const char *Css = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;background:#fafafa;margin:0}
main{max-width:1240px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0}
h2{font-size:19px;margin:36px 0 4px;padding-top:14px;border-top:2px solid #ccc}
h3{font-size:15px;margin:20px 0 6px}
.meta{color:#555;margin:0 0 8px}
nav a{margin-right:12px}
table{border-collapse:collapse;margin:6px 0 12px;background:#fff}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:14px;margin:8px 0}
svg.chart{width:100%;height:auto;background:#fff;border:1px solid #ddd;border-radius:6px}
svg.chart.fixed{width:auto;max-width:100%}
svg .title{font-size:14px;font-weight:600;fill:#222}
svg .tick,svg .legend,svg .value{font-size:11px;fill:#444}
svg .label{font-size:12px;fill:#333}
svg line.axis,svg line.tick{stroke:#444}
svg line.grid{stroke:#ececec}
svg line.reference{stroke:#555;stroke-dasharray:5 4}
svg path.step{stroke-width:2}
svg rect.gain{fill:#2a9d8f}
svg rect.loss{fill:#e76f51}
svg rect.total{fill:#264653}
svg rect.empty{fill:#f1f1f1}
svg rect.best{stroke:#111;stroke-width:2.5}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
pre.reply{white-space:pre-wrap;word-break:break-word;max-height:9em;overflow:auto;margin:0;background:#f6f6f6;padding:4px;max-width:560px}
.note{color:#666;font-style:italic}
dl.summary{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0}
dl.summary dt{color:#555}
dl.summary dd{margin:0}
footer{color:#777;margin-top:40px;font-size:12px}
)css";

// The page's only script: it marks the page as drawn (the tests read the
// mark from the rendered DOM). Its hash is in the content security policy.
constexpr const char *Script =
    "(function () {\n"
    "  var n = document.querySelectorAll('svg.chart').length;\n"
    "  var s = document.getElementById('r3-status');\n"
    "  s.textContent = n + ' charts drawn';\n"
    "  s.setAttribute('data-charts', String(n));\n"
    "})();\n";

/// "1.000 ms [0.9500 ms, 1.100 ms]".
std::string withInterval(const json &Value, const json &Ci,
                         std::string (*Format)(std::optional<double>)) {
  std::string Out = Format(number(Value));
  if (Ci.is_array())
    Out += " [" + Format(number(Ci[0])) + ", " + Format(number(Ci[1])) + "]";
  return Out;
}

std::string utcTime(double Seconds) {
  std::time_t T = static_cast<std::time_t>(Seconds);
  std::tm Tm{};
  gmtime_r(&T, &Tm);
  char Buf[64];
  std::strftime(Buf, sizeof Buf, "%Y-%m-%d %H:%M:%S UTC", &Tm);
  return Buf;
}

/// Base64 of the bytes a hex string spells (the CSP wants the script's hash
/// so).
std::string base64OfHex(const std::string &Hex) {
  static const char Digits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint32_t> B;
  for (size_t I = 0; I + 1 < Hex.size(); I += 2)
    B.push_back(uint32_t(std::stoul(Hex.substr(I, 2), nullptr, 16)));
  std::string Out;
  for (size_t I = 0; I < B.size(); I += 3) {
    size_t N = B.size() - I;
    uint32_t V =
        B[I] << 16 | (N > 1 ? B[I + 1] << 8 : 0) | (N > 2 ? B[I + 2] : 0);
    Out += Digits[V >> 18 & 63];
    Out += Digits[V >> 12 & 63];
    Out += N > 1 ? Digits[V >> 6 & 63] : '=';
    Out += N > 2 ? Digits[V & 63] : '=';
  }
  return Out;
}

std::string page(const std::string &Title, const std::string &Body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
         "charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
         "'none'; style-src 'unsafe-inline'; img-src data:; script-src "
         "'sha256-" +
         base64OfHex(sha256Hex(Script)) +
         "'\">\n<meta name=\"viewport\" content=\"width=device-width, "
         "initial-scale=1\">\n<title>" +
         escape(Title) + "</title>\n<style>" + Css +
         "</style>\n</head>\n<body>\n<main>\n" + Body + "</main>\n<script>" +
         Script + "</script>\n</body>\n</html>\n";
}

// --- the campaign ---

std::string header(const json &J) {
  const json &C = J["campaign"];
  std::string Title =
      C.is_null() ? "r3 report" : "r3 report: " + text(C["path"]);
  std::string Out =
      "<header>\n<h1>" + escape(Title) + "</h1>\n<p class=\"meta\">";
  if (!C.is_null())
    Out += escape(text(C["backend"]) + " backend, " + text(C["state"]) +
                  ", seed " + text(C["seed"]) + ", created " +
                  utcTime(C["created"].get<double>())) +
           "; ";
  Out += escape(std::to_string(J["evaluations"].get<uint64_t>()) +
                " evaluations in " + text(J["database"])) +
         "</p>\n<nav>kernels:";
  for (size_t I = 0; I < J["kernels"].size(); ++I)
    Out += " <a href=\"#kernel-" + std::to_string(I) + "\">" +
           escape(text(J["kernels"][I]["name"])) + "</a>";
  return Out + "</nav>\n</header>\n";
}

/// The application end to end, when the campaign knows its kernels' shares:
/// the prediction, the ceiling and the measured runs, then each kernel's
/// share and speedup.
std::string endToEnd(const json &J) {
  const json &E = J["end_to_end"];
  if (!E.is_object())
    return "";
  Table T{{"kernel", "share of the run", "speedup"}, "tnn", {}};
  for (const json &K : E["kernels"])
    T.Rows.push_back({text(K["name"]), formatShare(K["share"].get<double>()),
                      formatSpeedup(number(K["speedup"]))});
  return "<section id=\"end-to-end\">\n<h2>End to end</h2>\n<p>" +
         escape(text(E["summary"])) + "</p>\n" + tableHtml(T, "end-to-end") +
         "</section>\n";
}

std::string overview(const json &J) {
  Table T{{"kernel", "baseline", "best", "speedup", "95% CI", "evaluations",
           "verified", "failed", "LLM calls"},
          "tnnnnnnnn",
          {}};
  for (const json &K : J["kernels"]) {
    std::string Ci = "-";
    if (K["speedup_ci"].is_array())
      Ci = formatSpeedup(number(K["speedup_ci"][0])) + " - " +
           formatSpeedup(number(K["speedup_ci"][1]));
    uint64_t N = K["evaluations"], Ok = K["verified"];
    T.Rows.push_back({text(K["name"]), formatMs(number(K["baseline_ms"])),
                      formatMs(number(K["best_ms"])),
                      formatSpeedup(number(K["speedup"])), Ci,
                      std::to_string(N), std::to_string(Ok),
                      std::to_string(N - Ok), text(K["llm"]["calls"])});
  }
  // Without LLM calls anywhere, no column for them.
  if (J["llm"]["calls"].get<uint64_t>() == 0) {
    T.Head.pop_back();
    for (auto &Row : T.Rows)
      Row.pop_back();
  }
  return "<section id=\"overview\">\n<h2>Kernels</h2>\n" +
         tableHtml(T, "overview") + "</section>\n";
}

std::string outcomes(const json &ByOutcome) {
  std::vector<std::string> Parts;
  for (const char *O : LlmOutcomes)
    if (ByOutcome.value(O, 0) > 0)
      Parts.push_back(std::string(O) + " " +
                      std::to_string(ByOutcome.value(O, 0)));
  return join(Parts, ", ");
}

/// Per model: calls, tokens, latency, outcomes (llmSummary's models).
std::string modelsTable(const json &Summary) {
  Table T{{"model", "calls", "tokens in", "tokens out", "median latency",
           "total latency", "outcomes"},
          "tnnnnnt",
          {}};
  auto Row = [](const std::string &Name, const json &M) {
    return std::vector<std::string>{
        Name,
        text(M["calls"]),
        text(M["tokens_in"]),
        text(M["tokens_out"]),
        M["latency_ms_median"].is_null()
            ? "-"
            : svg::formatMs(M["latency_ms_median"].get<double>()),
        svg::formatMs(M["latency_ms_total"].get<double>()),
        outcomes(M["by_outcome"])};
  };
  for (const json &M : Summary["models"])
    T.Rows.push_back(Row(text(M["model"]), M));
  if (Summary["models"].size() > 1)
    T.Rows.push_back(Row("all models", Summary));
  return tableHtml(T, "llm-models");
}

std::string campaignLlm(const json &J) {
  if (J["llm"]["calls"].get<uint64_t>() == 0)
    return "";
  return "<section id=\"llm\">\n<h2>LLM calls</h2>\n" + modelsTable(J["llm"]) +
         "</section>\n";
}

// --- a kernel: the best time so far ---

struct Progress {
  std::vector<svg::Point> Best, All;
};

/// The verified medians over X, and the best so far at each improvement
/// (extended to the last X); All thinned to a few thousand dots. Each median
/// is drawn as the report compares it with the baseline (with baselines
/// from several devices: on the scale of the best's device), so the curve
/// ends at the report's best.
Progress progress(std::vector<std::pair<double, const EvaluationRow *>> Xs,
                  const report::KernelTimes &Times) {
  std::stable_sort(Xs.begin(), Xs.end(), [](const auto &A, const auto &B) {
    return A.first < B.first;
  });
  Progress P;
  double Cur = std::numeric_limits<double>::infinity();
  for (const auto &[X, E] : Xs) {
    if (!E->Result.Verified || !(E->MedianMs > 0))
      continue;
    std::optional<double> Ms = Times.comparable(E->Device, E->MedianMs);
    if (!Ms)
      continue;
    P.All.push_back({X, *Ms});
    if (*Ms < Cur)
      P.Best.push_back({X, Cur = *Ms});
  }
  if (!P.Best.empty())
    P.Best.push_back({Xs.back().first, Cur});
  if (size_t Stride = P.All.size() / 3000 + 1; Stride > 1) {
    std::vector<svg::Point> Thin;
    for (size_t I = 0; I < P.All.size(); I += Stride)
      Thin.push_back(P.All[I]);
    P.All = std::move(Thin);
  }
  return P;
}

/// What a progress chart's X is.
enum class Over { Evaluations, WallTime };

std::string progressChart(const KernelData &D, const Progress &P, Over X) {
  bool Count = X == Over::Evaluations;
  svg::XYChart C;
  C.Id = D.id(Count ? "best-evaluations" : "best-time");
  C.Title = Count ? "best verified median vs. evaluations"
                  : "best verified median vs. wall time";
  C.XLabel = Count ? "evaluations" : "time since the campaign started";
  C.YLabel = "verified median";
  C.XFormat = Count ? svg::formatNumber : svg::formatSeconds;
  C.XMinStep = Count ? 1 : 0;
  C.YFormat = svg::formatMs;
  C.Lines = {{"verified evaluations", "#9db4c8", svg::SeriesStyle::Dots, P.All},
             {"best so far", "#d1495b", svg::SeriesStyle::Step, P.Best}};
  std::optional<double> Baseline = number(D.report()["baseline_ms"]);
  if (Baseline) {
    C.Reference = *Baseline;
    C.ReferenceLabel = "baseline";
  }
  // Keep the curve readable: far slower evaluations sit on the top edge.
  C.YMax = std::max(Baseline.value_or(0), P.Best.front().Y) * 1.5;
  return svg::xyChart(C);
}

std::string progressCharts(const KernelData &D, double T0) {
  std::vector<std::pair<double, const EvaluationRow *>> ByCount, ByTime;
  for (const EvaluatedCandidate &E : D.Evaluations) {
    ByCount.push_back({double(ByCount.size() + 1), &E.Evaluation});
    ByTime.push_back({E.Evaluation.Finished - T0, &E.Evaluation});
  }
  Progress A = progress(ByCount, D.Times), B = progress(ByTime, D.Times);
  std::string Out = "<h3>Best time so far</h3>\n";
  if (A.Best.empty())
    return Out + note("nothing verified yet");
  return Out + "<div class=\"charts\">\n" +
         progressChart(D, A, Over::Evaluations) +
         progressChart(D, B, Over::WallTime) + "</div>\n";
}

// --- a kernel: what earned the speedup ---

std::vector<svg::FactorBar> factorBarsOf(const json &Factors,
                                         const json &Total) {
  std::vector<svg::FactorBar> Bars;
  for (const auto &[Name, F] : Factors.items())
    Bars.push_back({Name, F.get<double>()});
  std::sort(Bars.begin(), Bars.end(),
            [](const auto &A, const auto &B) { return A.Factor > B.Factor; });
  if (Total.is_number())
    Bars.push_back({"total", Total.get<double>(), true});
  return Bars;
}

std::string contributions(const KernelData &D) {
  const json &K = D.report(), &L = K["lineage"];
  std::string Out = "<h3>Where the speedup came from</h3>\n";
  if (L.is_null())
    return Out + note("no lineage: nothing verified, or no baseline");
  std::vector<std::string> Steps;
  for (const json &S : L["steps"])
    Steps.push_back(text(S["level"]) + " " + text(S["operator"]) + " " +
                    formatSpeedup(number(S["factor"])));
  return Out + "<div class=\"charts\">\n" +
         svg::factorBars(D.id("by-level"), "speedup by level",
                         factorBarsOf(L["by_level"], K["speedup"])) +
         svg::factorBars(D.id("by-operator"), "speedup by operator",
                         factorBarsOf(L.value("by_operator", json::object()),
                                      K["speedup"])) +
         "</div>\n<p class=\"meta\">lineage of the best candidate: " +
         escape(join(Steps, " \u2192 ")) + "</p>\n";
}

// --- a kernel: failures over time ---

/// The failure categories: the evaluations' kinds, then the LLM's outcomes
/// other than ok.
std::vector<std::string> failureCategories() {
  std::vector<std::string> Out;
  for (FailureKind K : ReportedFailures)
    Out.push_back(failureKindName(K));
  for (const char *O : LlmOutcomes)
    if (std::string_view(O) != "ok")
      Out.push_back(std::string_view(O) == "llm_invalid"
                        ? std::string(O)
                        : "llm " + std::string(O));
  return Out;
}

/// Each failure as (when, category index).
std::vector<std::pair<double, size_t>> failureEvents(const KernelData &D) {
  std::vector<std::pair<double, size_t>> Out;
  for (const EvaluatedCandidate &E : D.Evaluations)
    for (size_t K = 0; K < ReportedFailures.size(); ++K)
      if (!E.Evaluation.Result.Verified &&
          E.Evaluation.Result.Failure == ReportedFailures[K])
        Out.push_back({E.Evaluation.Finished, K});
  for (const LlmCallRow &C : D.Calls)
    for (size_t O = 1; O < LlmOutcomes.size(); ++O)
      if (C.Outcome == LlmOutcomes[O])
        Out.push_back({C.Finished, ReportedFailures.size() + O - 1});
  return Out;
}

std::string failureTable(const std::vector<std::string> &Categories,
                         const std::vector<uint64_t> &Totals) {
  Table T{{"kind", "count"}, "tn", {}};
  for (size_t K = 0; K < Categories.size(); ++K)
    if (Totals[K] > 0)
      T.Rows.push_back({Categories[K], std::to_string(Totals[K])});
  return tableHtml(T, "failures");
}

/// The span of time the kernel's evaluations and failures cover.
std::pair<double, double>
failureSpan(const KernelData &D,
            const std::vector<std::pair<double, size_t>> &Events) {
  double Lo = Events.front().first, Hi = Lo;
  for (const EvaluatedCandidate &E : D.Evaluations) {
    Lo = std::min(Lo, E.Evaluation.Finished);
    Hi = std::max(Hi, E.Evaluation.Finished);
  }
  for (const auto &[At, K] : Events) {
    Lo = std::min(Lo, At);
    Hi = std::max(Hi, At);
  }
  return {Lo, Hi};
}

/// Keeps the categories that occurred, each in its own colour.
void keepOccurred(svg::StackedColumns &C, const std::vector<std::string> &All,
                  const std::vector<uint64_t> &Totals) {
  std::vector<size_t> Keep;
  for (size_t K = 0; K < All.size(); ++K)
    if (Totals[K] > 0) {
      Keep.push_back(K);
      C.Categories.push_back(All[K]);
      C.Colors.push_back(svg::paletteColor(K));
    }
  for (auto &Bin : C.Counts) {
    std::vector<uint64_t> Kept;
    for (size_t K : Keep)
      Kept.push_back(Bin[K]);
    Bin = std::move(Kept);
  }
}

std::string failures(const KernelData &D, double T0) {
  std::string Out = "<h3>Failures over time</h3>\n";
  auto Events = failureEvents(D);
  if (Events.empty())
    return Out + note("no failures");
  auto [Lo, Hi] = failureSpan(D, Events);
  const size_t Bins = 20;
  std::vector<std::string> All = failureCategories();
  std::vector<uint64_t> Totals(All.size(), 0);
  svg::StackedColumns C;
  C.Id = D.id("failures");
  C.Title = "failures by kind over time";
  C.XLabel = "time since the campaign started";
  C.XStart = Lo - T0;
  C.XFormat = svg::formatSeconds;
  C.BinWidth = Hi > Lo ? (Hi - Lo) / Bins : 1;
  C.Counts.assign(Bins, std::vector<uint64_t>(All.size(), 0));
  for (const auto &[At, K] : Events) {
    ++C.Counts[std::min(Bins - 1, size_t((At - Lo) / C.BinWidth))][K];
    ++Totals[K];
  }
  keepOccurred(C, All, Totals);
  return Out + "<div class=\"charts\">\n" + svg::stackedColumns(C) + "<div>" +
         failureTable(All, Totals) + "</div>\n</div>\n";
}

// --- a kernel: the LLM's calls ---

/// The variants the LLM wrote: how their source candidate fared, and their
/// best verified time (as the report compares times).
std::string llmVariants(const KernelData &D) {
  std::map<int64_t, std::pair<std::string, std::optional<double>>> Fate;
  for (const EvaluatedCandidate &E : D.Evaluations) {
    auto &[Source, Best] = Fate[E.Candidate.VariantId];
    const EvaluationRow &R = E.Evaluation;
    if (E.Candidate.Level == "source")
      Source =
          R.Result.Verified ? "verified" : failureKindName(R.Result.Failure);
    std::optional<double> Ms = R.Result.Verified && R.MedianMs > 0
                                   ? D.Times.comparable(R.Device, R.MedianMs)
                                   : std::nullopt;
    if (Ms && (!Best || *Ms < *Best))
      Best = Ms;
  }
  Table T{{"variant", "island", "parents", "source candidate", "best"},
          "nnttn",
          {}};
  for (const VariantRow &V : D.Variants) {
    if (V.Operator != "llm")
      continue;
    auto It = Fate.find(V.Id);
    bool Known = It != Fate.end();
    T.Rows.push_back({std::to_string(V.Id), std::to_string(V.Island),
                      V.ParentsJson,
                      Known && !It->second.first.empty() ? It->second.first
                                                         : "not evaluated",
                      formatMs(Known ? It->second.second : std::nullopt)});
  }
  if (T.Rows.empty())
    return "";
  return "<p class=\"meta\">variants the LLM wrote</p>\n" +
         tableHtml(T, "llm-variants");
}

/// The latest calls that made nothing, with the reason and the reply.
std::string llmRejections(const KernelData &D, double T0) {
  Table T{
      {"finished", "model", "outcome", "attempts", "http", "reason", "reply"},
      "tttnntp",
      {}};
  for (auto It = D.Calls.rbegin(); It != D.Calls.rend() && T.Rows.size() < 25;
       ++It) {
    if (It->Outcome == "ok")
      continue;
    std::string Reply = It->Reply.size() > 400
                            ? It->Reply.substr(0, 400) + "\u2026"
                            : It->Reply;
    T.Rows.push_back({svg::formatSeconds(It->Finished - T0), It->Model,
                      It->Outcome, std::to_string(It->Attempts),
                      It->HttpStatus ? std::to_string(*It->HttpStatus) : "-",
                      It->Reason, Reply});
  }
  if (T.Rows.empty())
    return "";
  return "<p class=\"meta\">calls that made no variant, latest first</p>\n" +
         tableHtml(T, "llm-rejections");
}

std::string kernelLlm(const KernelData &D, double T0) {
  if (D.Calls.empty())
    return "";
  return "<h3>LLM calls</h3>\n" + modelsTable(llmSummary(D.Calls)) +
         llmVariants(D) + llmRejections(D, T0);
}

// --- a kernel: the best settings ---

using SettingRows = std::vector<std::vector<std::string>>;

/// The best candidate's variant: what made it, its genome and its knobs.
void variantRows(const KernelData &D, const json &V, SettingRows &Rows) {
  if (V.is_null())
    return;
  Rows.push_back({"variant", text(V["id"]) + " (" + text(V["operator"]) +
                                 ", island " + text(V["island"]) + ")"});
  Rows.push_back({"genome", text(V["genome_key"])});
  Rows.push_back({"source", V["source_hash"].is_null()
                                ? "the recorded code"
                                : "text " + text(V["source_hash"])});
  for (const VariantRow &Row : D.Variants)
    if (Row.Id == V["id"].get<int64_t>())
      for (const auto &[Name, Value] : variantKnobs(D.Spec, Row))
        Rows.push_back({"knob " + Name, Value});
}

/// What ran: pipeline, codegen level, the other recorded settings, the point.
void runRows(const json &B, SettingRows &Rows) {
  Rows.push_back({"pipeline", text(B["pipeline"])});
  Rows.push_back({"codegen_opt", text(B["codegen_opt"])});
  if (B["settings"].is_object())
    for (const auto &[Key, Value] : B["settings"].items())
      if (Key != "pipeline" && Key != "codegen_opt")
        Rows.push_back({Key, text(Value)});
  if (B["point"].is_string() && !B["point"].get<std::string>().empty())
    Rows.push_back({"point", text(B["point"])});
}

std::string bestSettings(const KernelData &D) {
  const json &K = D.report(), &B = K["best"];
  std::string Out = "<h3>Best settings</h3>\n";
  if (B.is_null())
    return Out + note("nothing verified yet");
  Table T{{"setting", "value"}, "tt", {}};
  T.Rows = {
      {"candidate", text(B["candidate"]) + " (identity " +
                        text(B["identity"]).substr(0, 16) + "...)"},
      {"found by",
       text(B["level"]) + " level, operator " + text(B["operator"])},
      {"median", withInterval(K["best_ms"], K["best_ci_ms"], formatMs)},
      {"speedup", withInterval(K["speedup"], K["speedup_ci"], formatSpeedup)}};
  variantRows(D, B["variant"], T.Rows);
  runRows(B, T.Rows);
  return Out + tableHtml(T, "best-settings");
}

// --- the page ---

std::string kernelSection(const KernelData &D, const std::optional<Campaign> &C,
                          double T0) {
  const json &K = D.report();
  uint64_t N = K["evaluations"], Ok = K["verified"];
  std::string Out = "<section class=\"kernel\" id=\"kernel-" +
                    std::to_string(D.Index) + "\">\n<h2>kernel " +
                    escape(text(K["name"])) + "</h2>\n<dl class=\"summary\">";
  auto Item = [&](const std::string &Key, const std::string &Value) {
    Out += "<dt>" + escape(Key) + "</dt><dd>" + escape(Value) + "</dd>";
  };
  Item("capture", text(K["capture"]));
  Item("baseline",
       withInterval(K["baseline_ms"], K["baseline_ci_ms"], formatMs));
  Item("best", withInterval(K["best_ms"], K["best_ci_ms"], formatMs));
  Item("speedup", withInterval(K["speedup"], K["speedup_ci"], formatSpeedup));
  Item("evaluations", std::to_string(N) + ", " + std::to_string(Ok) +
                          " verified, " + std::to_string(N - Ok) + " failed");
  Out += "</dl>\n";
  return Out + progressCharts(D, T0) + contributions(D) + archiveSection(D, C) +
         failures(D, T0) + kernelLlm(D, T0) + bestSettings(D) + "</section>\n";
}

Expected<std::vector<KernelData>>
loadKernels(History &H, const json &Report, const std::optional<Campaign> &C) {
  std::vector<KernelRow> Rows;
  R3_TRY(moveInto(H.kernels(), Rows));
  std::vector<KernelData> Out;
  // The report lists the kernels as kernels() does, in id order.
  for (size_t I = 0; I < Rows.size() && I < Report["kernels"].size(); ++I) {
    KernelData &D = Out.emplace_back();
    D.Report = &Report["kernels"][I];
    D.Index = I;
    R3_TRY(moveInto(H.evaluations(Rows[I].Id), D.Evaluations));
    R3_TRY(moveInto(H.llmCalls(Rows[I].Id), D.Calls));
    R3_TRY(moveInto(H.archive(Rows[I].Id), D.Archive));
    R3_TRY(moveInto(H.variants(Rows[I].Id), D.Variants));
    std::vector<BaselineRow> Baselines;
    R3_TRY(moveInto(H.baselines(Rows[I].Id), Baselines));
    std::vector<const EvaluatedCandidate *> Mine;
    for (const EvaluatedCandidate &E : D.Evaluations)
      Mine.push_back(&E);
    D.Times = report::kernelTimes(Baselines, Mine);
    D.Spec = C ? findKernelSpec(*C, Rows[I].Name) : nullptr;
  }
  return Out;
}

/// Where the time axes start: the campaign's creation, else the first
/// evaluation.
double timeOrigin(const json &Report, const std::vector<KernelData> &Ks) {
  const json &C = Report["campaign"];
  if (C.is_object() && C["created"].is_number())
    return C["created"].get<double>();
  double T0 = std::numeric_limits<double>::infinity();
  for (const KernelData &D : Ks)
    for (const EvaluatedCandidate &E : D.Evaluations)
      T0 = std::min(T0, E.Evaluation.Started);
  return std::isfinite(T0) ? T0 : 0;
}
} // namespace
} // namespace r3::report::html

namespace r3::report {

Expected<std::string> reportHtml(History &H, const nlohmann::json &Report) {
  using namespace html;
  std::optional<CampaignRow> Row;
  R3_TRY(moveInto(H.campaign(), Row));
  // Without the campaign file the archive is drawn from descriptor values.
  std::optional<Campaign> C;
  if (Row)
    if (auto Parsed = storedCampaign(*Row, H.path()))
      C = std::move(*Parsed);
  std::vector<KernelData> Kernels;
  R3_TRY(moveInto(loadKernels(H, Report, C), Kernels));
  double T0 = timeOrigin(Report, Kernels);
  std::string Body =
      header(Report) + endToEnd(Report) + overview(Report) + campaignLlm(Report);
  for (const KernelData &D : Kernels)
    Body += kernelSection(D, C, T0);
  Body += "<footer>written by r3 " + escape(Version) + " on " +
          escape(utcTime(nowSeconds())) +
          " &middot; <span id=\"r3-status\">charts are inline SVG</span>"
          "</footer>\n";
  const json &Campaign = Report["campaign"];
  return page(Campaign.is_null() ? "r3 report"
                                 : "r3 report: " + text(Campaign["path"]),
              Body);
}

} // namespace r3::report
