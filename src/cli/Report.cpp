// `r3 report`: the results of a campaign, from its history database (opened
// read-only, so it works while the campaign runs): per kernel, the baseline
// and best time, the speedup with a confidence interval, the evaluations and
// failures by kind, and what found the best (level, operator, settings,
// source variant). The JSON keys are stable (docs/history-schema.md lists
// them) so that scripts can rely on them.
#include "cli/Report.h"

#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "report/Html.h"
#include "replay/Stats.h"
#include "support/FileUtil.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <map>

namespace r3::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// --- the table ---

/// printf into a string.
[[gnu::format(printf, 2, 3)]] void appendf(std::string &Out, const char *Fmt,
                                           ...) {
  char Buf[1024];
  va_list Args;
  va_start(Args, Fmt);
  int N = std::vsnprintf(Buf, sizeof Buf, Fmt, Args);
  va_end(Args);
  if (N >= static_cast<int>(sizeof Buf)) {
    std::string Big(static_cast<size_t>(N) + 1, '\0');
    va_start(Args, Fmt);
    std::vsnprintf(Big.data(), Big.size(), Fmt, Args);
    va_end(Args);
    Big.pop_back();
    Out += Big;
  } else if (N > 0) {
    Out += Buf;
  }
}

std::optional<double> number(const json &J) {
  return J.is_number() ? std::optional<double>(J.get<double>()) : std::nullopt;
}

std::string interval(const json &Ci,
                     std::string (*Format)(std::optional<double>)) {
  if (!Ci.is_array())
    return "";
  return "  [" + Format(number(Ci[0])) + ", " + Format(number(Ci[1])) + "]";
}

/// "key=value key=value" of a settings object (or its text). Settings left
/// as recorded (an empty pipeline, codegen level -1) are not shown; when none
/// is set, the text says so.
std::string settingsText(const json &S) {
  if (!S.is_object())
    return S.is_null() ? "-" : S.dump();
  std::vector<std::string> Parts;
  for (const auto &[Key, Value] : S.items()) {
    if (Value == "" || Value == -1)
      continue;
    Parts.push_back(
        Key + "=" +
        (Value.is_string() ? Value.get<std::string>() : Value.dump()));
  }
  return Parts.empty() ? "as recorded" : join(Parts, " ");
}

std::string failuresText(const json &K) {
  std::vector<std::string> Parts;
  for (const auto &[Kind, N] : K["failures"].items())
    if (N.get<uint64_t>() > 0)
      Parts.push_back(Kind + " " + std::to_string(N.get<uint64_t>()));
  return Parts.empty() ? "" : ": " + join(Parts, ", ");
}

void appendBest(std::string &Out, const json &B) {
  std::string Level = B["level"], Op = B["operator"], Point = B["point"],
              Pipeline = B["pipeline"];
  appendf(Out, "  %-13s %s level, operator %s (candidate %lld)\n",
          "found by:", Level.c_str(), Op.c_str(),
          B["candidate"].get<long long>());
  if (!Point.empty())
    appendf(Out, "  %-13s %s\n", "point:", Point.c_str());
  appendf(Out, "  %-13s %s\n",
          "settings:", settingsText(B["settings"]).c_str());
  appendf(Out, "  %-13s %s, codegen opt %d\n",
          "ran:", Pipeline.empty() ? "-" : Pipeline.c_str(),
          B["codegen_opt"].get<int>());
  if (std::string Device = B.value("device", ""); !Device.empty())
    appendf(Out, "  %-13s %s\n", "device:", Device.c_str());
  const json &V = B["variant"];
  if (V.is_null())
    return;
  std::string Key = V["genome_key"], VOp = V["operator"];
  appendf(Out, "  %-13s %lld (%s, island %lld): %s\n",
          "variant:", V["id"].get<long long>(), VOp.c_str(),
          V["island"].get<long long>(), Key.c_str());
}

/// "lineage:  0.338 ms -> source knob 0.135 ms (2.50x) -> ..." and the
/// factor each level earned.
void appendLineage(std::string &Out, const json &L) {
  std::vector<std::string> Steps, Levels;
  for (const json &S : L["steps"]) {
    std::string Level = S["level"], Op = S["operator"];
    Steps.push_back(Level + " " + Op + " " + formatMs(number(S["median_ms"])) +
                    " (" + formatSpeedup(number(S["factor"])) + ")");
  }
  for (const auto &[Level, Factor] : L["by_level"].items())
    Levels.push_back(Level + " " + formatSpeedup(number(Factor)));
  appendf(Out, "  %-13s %s\n", "lineage:", join(Steps, " -> ").c_str());
  appendf(Out, "  %-13s %s\n", "by level:", join(Levels, ", ").c_str());
}

/// "ok 3, llm_invalid 2" of the outcomes that happened.
std::string outcomesText(const json &ByOutcome) {
  std::vector<std::string> Parts;
  for (const char *Outcome : LlmOutcomes)
    if (uint64_t N = ByOutcome.value(Outcome, uint64_t(0)); N > 0)
      Parts.push_back(Outcome + (" " + std::to_string(N)));
  return join(Parts, ", ");
}

/// "7 calls (ok 3, timeout 1), 52100 tokens in, 8900 out".
std::string llmCallsText(const json &L) {
  uint64_t Calls = L["calls"];
  std::string Text = std::to_string(Calls) + (Calls == 1 ? " call" : " calls");
  if (Calls > 0)
    Text += " (" + outcomesText(L["by_outcome"]) + ")";
  return Text + ", " + std::to_string(L["tokens_in"].get<uint64_t>()) +
         " tokens in, " + std::to_string(L["tokens_out"].get<uint64_t>()) +
         " out";
}

/// The kernel's LLM line, when the LLM operator ran for it.
void appendKernelLlm(std::string &Out, const json &L) {
  if (L.is_null() || (L["calls"] == 0 && L["variants"] == 0))
    return;
  appendf(Out, "  %-13s %s; %llu variants%s\n", "llm:", llmCallsText(L).c_str(),
          L["variants"].get<unsigned long long>(),
          L["best_from_llm"].get<bool>() ? ", the best descends from one" : "");
}

void appendKernel(std::string &Out, const json &K) {
  std::string Name = K["name"], Capture = K["capture"];
  appendf(Out, "\nkernel %s (%s)\n", Name.c_str(), Capture.c_str());
  appendf(Out, "  %-13s %s%s\n",
          "baseline:", formatMs(number(K["baseline_ms"])).c_str(),
          interval(K["baseline_ci_ms"], formatMs).c_str());
  appendf(Out, "  %-13s %s%s\n",
          "best:", formatMs(number(K["best_ms"])).c_str(),
          interval(K["best_ci_ms"], formatMs).c_str());
  appendf(Out, "  %-13s %s%s\n",
          "speedup:", formatSpeedup(number(K["speedup"])).c_str(),
          interval(K["speedup_ci"], formatSpeedup).c_str());
  uint64_t N = K["evaluations"], Ok = K["verified"];
  appendf(Out, "  %-13s %llu, %llu verified, %llu failed%s\n",
          "evaluations:", static_cast<unsigned long long>(N),
          static_cast<unsigned long long>(Ok),
          static_cast<unsigned long long>(N - Ok), failuresText(K).c_str());
  if (!K["best"].is_null())
    appendBest(Out, K["best"]);
  if (K.contains("lineage") && !K["lineage"].is_null())
    appendLineage(Out, K["lineage"]);
  appendKernelLlm(Out, K.value("llm", json()));
}

std::string reportTable(const json &J) {
  std::string Out;
  const json &C = J["campaign"];
  if (C.is_null()) {
    appendf(Out, "campaign:    (none recorded yet)\n");
  } else {
    std::string Path = C["path"], Backend = C["backend"], State = C["state"];
    appendf(Out, "campaign:    %s (%s backend, %s)\n", Path.c_str(),
            Backend.c_str(), State.c_str());
  }
  std::string Db = J["database"];
  appendf(Out, "database:    %s, %llu evaluations\n", Db.c_str(),
          J["evaluations"].get<unsigned long long>());
  const json &Llm = J["llm"];
  if (Llm["calls"].get<uint64_t>() > 0) {
    std::vector<std::string> Models;
    for (const json &M : Llm["models"])
      Models.push_back(M["model"].get<std::string>() + " " +
                       std::to_string(M["calls"].get<uint64_t>()));
    appendf(Out, "llm:         %s; by model: %s\n", llmCallsText(Llm).c_str(),
            join(Models, ", ").c_str());
  }
  Out += endToEndText(J["end_to_end"]);
  if (std::string W = workersText(J["workers"]); !W.empty())
    Out += "workers (the campaign's latest run):\n" + W;
  for (const json &K : J["kernels"])
    appendKernel(Out, K);
  return Out;
}

Error writeOutput(const std::string &Text,
                  const std::optional<std::string> &To) {
  if (!To) {
    std::fputs(Text.c_str(), stdout);
    return Error::success();
  }
  return writeFileAtomically(*To, Text);
}

// --- the application's time under r3 run (--app-time) ---

Expected<json> readRunSummary(const std::string &Path) {
  std::string Text;
  R3_TRY(moveInto(readWholeFile(Path, "r3 run --json summary (--app-time)"),
                  Text));
  json J = json::parse(Text, nullptr, false);
  if (!J.is_object() || !J.contains("wall_s") || !J.contains("kernels") ||
      !J["kernels"].is_array())
    return makeError(Path, ": not the JSON summary of r3 run --json");
  return J;
}

/// Which arm a run was: "plain" (--keep-original), "tuned" (a kernel
/// replaced), or empty (neither: nothing to compare).
std::string armOf(const json &Run) {
  std::string Arm;
  for (const json &K : Run["kernels"]) {
    std::string O = K.value("outcome", "");
    if (O == "kept")
      return "plain";
    if (O == "replaced")
      Arm = "tuned";
  }
  return Arm;
}

/// The runs' medians: the application's wall time by arm, and each kernel's
/// time a launch in the application by arm beside the campaign's speedup.
Expected<json> appTimeJson(const std::vector<std::string> &Files) {
  std::map<std::string, std::vector<double>> Wall;
  // kernel -> arm -> ms a launch; kernel -> the campaign's speedup
  std::map<std::string, std::map<std::string, std::vector<double>>> PerLaunch;
  std::map<std::string, json> Predicted;
  for (const std::string &F : Files) {
    json Run;
    R3_TRY(moveInto(readRunSummary(F), Run));
    std::string Arm = armOf(Run);
    if (Arm.empty())
      return makeError(F, ": neither a --keep-original run nor one that "
                          "replaced a kernel");
    if (Run.value("exit_code", 0) != 0)
      return makeError(F, ": the application failed in that run (",
                       Run.value("exit", std::string("?")), ")");
    Wall[Arm].push_back(Run["wall_s"].get<double>());
    for (const json &K : Run["kernels"]) {
      std::string Name = K.value("kernel", "");
      Predicted[Name] = K.value("speedup", json());
      uint64_t Timed = K.value("timed_launches", uint64_t(0));
      if (Timed > 0 && K["kernel_ms"].is_number())
        PerLaunch[Name][Arm].push_back(K["kernel_ms"].get<double>() / Timed);
    }
  }
  auto med = [](const std::vector<double> &V) {
    return V.empty() ? json(nullptr) : json(computeStats(V).Median);
  };
  json Out = {{"runs",
               {{"plain", Wall["plain"].size()},
                {"tuned", Wall["tuned"].size()}}},
              {"wall_s", {{"plain", med(Wall["plain"])},
                          {"tuned", med(Wall["tuned"])}}}};
  json P = Out["wall_s"]["plain"], T = Out["wall_s"]["tuned"];
  Out["end_to_end"] = P.is_number() && T.is_number() && T.get<double>() > 0
                          ? json(P.get<double>() / T.get<double>())
                          : json(nullptr);
  Out["kernels"] = json::array();
  for (auto &[Name, Arms] : PerLaunch) {
    json Pl = med(Arms["plain"]), Tu = med(Arms["tuned"]);
    json Measured = Pl.is_number() && Tu.is_number() && Tu.get<double>() > 0
                        ? json(Pl.get<double>() / Tu.get<double>())
                        : json(nullptr);
    Out["kernels"].push_back({{"kernel", Name},
                              {"predicted", Predicted[Name]},
                              {"plain_ms_per_launch", Pl},
                              {"tuned_ms_per_launch", Tu},
                              {"measured", Measured}});
  }
  return Out;
}

void appendAppTime(std::string &Out, const json &A) {
  auto seconds = [](const json &V) {
    if (!V.is_number())
      return std::string("-");
    char Buf[32];
    std::snprintf(Buf, sizeof Buf, "%.4g s", V.get<double>());
    return std::string(Buf);
  };
  appendf(Out, "\nin the application (r3 run --use; %llu plain and %llu tuned "
               "runs, medians):\n",
          A["runs"]["plain"].get<unsigned long long>(),
          A["runs"]["tuned"].get<unsigned long long>());
  appendf(Out, "  %-13s %s plain, %s tuned: %s\n", "end to end:",
          seconds(A["wall_s"]["plain"]).c_str(),
          seconds(A["wall_s"]["tuned"]).c_str(),
          formatSpeedup(number(A["end_to_end"])).c_str());
  for (const json &K : A["kernels"])
    appendf(Out, "  kernel %s: %s plain, %s tuned a launch: %s measured, the "
                 "campaign predicted %s\n",
            K["kernel"].get<std::string>().c_str(),
            formatMs(number(K["plain_ms_per_launch"])).c_str(),
            formatMs(number(K["tuned_ms_per_launch"])).c_str(),
            formatSpeedup(number(K["measured"])).c_str(),
            formatSpeedup(number(K["predicted"])).c_str());
}

Expected<std::string> renderReport(History &H, const std::string &Format,
                                   const std::vector<std::string> &AppTime) {
  auto J = reportJson(H);
  if (!J)
    return J.takeError();
  if (!AppTime.empty()) {
    json A;
    R3_TRY(moveInto(appTimeJson(AppTime), A));
    (*J)["app_time"] = A;
    if (Format == "table") {
      std::string Out = reportTable(*J);
      appendAppTime(Out, A);
      return Out;
    }
  }
  if (Format == "html")
    return report::reportHtml(H, *J);
  return Format == "json" ? J->dump(2) + "\n" : reportTable(*J);
}

int runReport(const ParsedArgs &A) {
  // --app-time takes the files after it: `--app-time runs/*.json`. The
  // first positional argument is the database, wherever it stands.
  bool AppTimeList = A.has("--app-time");
  if (A.Positional.empty() || (A.Positional.size() > 1 && !AppTimeList))
    return usageError("'r3 report' takes one campaign database, got " +
                          std::to_string(A.Positional.size()),
                      "report");
  auto Format = choiceValue(A, "--format", {"table", "json", "html"}, "table");
  if (!Format)
    return usageError(Format.error().message(), "report");
  auto H = History::open(A.Positional.front(), HistoryMode::ReadOnly);
  if (!H)
    return fail(H.error());
  std::vector<std::string> AppTime;
  if (auto It = A.Values.find("--app-time"); It != A.Values.end())
    AppTime = It->second;
  AppTime.insert(AppTime.end(), A.Positional.begin() + 1, A.Positional.end());
  auto Text = renderReport(**H, *Format, AppTime);
  if (!Text)
    return fail(Text.error());
  if (Error E = writeOutput(*Text, A.value("--output")))
    return fail(E);
  return ExitSuccess;
}
} // namespace

CommandSpec reportCommand() {
  return {"report",
          "report a campaign's baselines, best variants and failures",
          "HISTORY.db [--format table|json|html] [-o FILE]",
          "Per kernel: the baseline and the best verified time, the speedup\n"
          "with its 95% confidence interval, the evaluations and failures by\n"
          "kind, the level, operator, settings and source variant of the\n"
          "best candidate, and the LLM operator's calls. The database is\n"
          "opened read-only, so a running campaign can be reported on.\n"
          "docs/history-schema.md lists the JSON keys. --format html writes\n"
          "one self-contained page with charts: the best time over\n"
          "evaluations and over time, the speedup by level and by operator,\n"
          "the MAP-Elites archive, failures over time and the LLM's calls.\n"
          "--app-time FILE... (the files after it, or the flag repeated) adds\n"
          "what the tuned kernels did inside the\n"
          "application: the JSON summaries of r3 run --json runs, with\n"
          "--keep-original (plain) and without (tuned), both with\n"
          "--time-kernels; medians of the application's wall time and of each\n"
          "kernel's time a launch, beside the campaign's prediction.",
          {{"--format", "", Arity::Value, "table|json|html",
            "output format (default table)"},
           {"--output", "-o", Arity::Value, "FILE",
            "write the report here instead of to stdout"},
           {"--app-time", "", Arity::Value, "FILE",
            "r3 run --json summaries (plain and tuned) to add the end-to-end "
            "line from: this file and the files after it (--app-time "
            "runs/*.json); may be repeated"}},
          false,
          runReport};
}

} // namespace r3::cli
