// `r3 tune --simulate CACHE`: one search strategy against a tuning cache,
// where evaluating a configuration is a lookup, to measure how many
// evaluations a strategy needs on a real kernel's space (bench/search-sim
// runs it over seeds and strategies). Output is a table, or JSON with stable
// keys and the whole trace for scripts.
#include "cli/TuneSimulate.h"

#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "search/Simulate.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace r3::cli {

namespace {
using nlohmann::json;

struct SimOptions {
  std::string Cache, Strategy = "portfolio", Format = "table";
  uint64_t Seed = 1;
  unsigned Budget = 200, Batch = 1;
};

/// The evaluation counts the table and the JSON report "best at".
constexpr size_t Milestones[] = {50, 100, 200};

/// A positive count that fits an unsigned, or none.
std::optional<unsigned> positiveCount(const std::string &Text) {
  auto N = parseUnsigned(Text);
  if (!N || *N == 0 || *N > std::numeric_limits<unsigned>::max())
    return std::nullopt;
  return static_cast<unsigned>(*N);
}

Error checkStrategy(const std::string &Name) {
  auto Names = search::strategyNames();
  if (std::find(Names.begin(), Names.end(), Name) != Names.end())
    return Error::success();
  // An unknown name is refused before any space is looked at, with the
  // strategy table's own "did you mean".
  search::Space Empty;
  auto S = search::makeStrategy(Name, Empty, {});
  return S ? makeError("unknown strategy '", Name, "'") : S.takeError();
}

Error checkNotCampaignOptions(const ParsedArgs &A) {
  if (!A.Positional.empty())
    return makeError("--simulate takes no campaign file, got '",
                     A.Positional[0], "'");
  for (const char *Name : {"--dry-run", "--resume", "--workers", "--grace"})
    if (A.has(Name))
      return makeError("option '", Name, "' does not apply to --simulate");
  return Error::success();
}

Error parseCounts(const ParsedArgs &A, SimOptions &O) {
  if (auto S = A.value("--seed")) {
    auto N = parseUnsigned(*S);
    if (!N)
      return makeError("option '--seed' expects a number, got '", *S, "'");
    O.Seed = *N;
  }
  if (auto B = A.value("--budget")) {
    auto N = positiveCount(*B);
    if (!N)
      return makeError("option '--budget' expects a positive number of "
                       "evaluations, got '",
                       *B, "'");
    O.Budget = *N;
  }
  if (auto B = A.value("--batch")) {
    auto N = positiveCount(*B);
    if (!N)
      return makeError("option '--batch' expects a positive number of points "
                       "proposed at once, got '",
                       *B, "'");
    O.Batch = *N;
  }
  return Error::success();
}

Expected<SimOptions> parseSimOptions(const ParsedArgs &A) {
  SimOptions O;
  R3_TRY(checkNotCampaignOptions(A));
  O.Cache = A.value("--simulate").value_or("");
  if (O.Cache.empty())
    return makeError("option '--simulate' expects a tuning cache file");
  O.Strategy = A.value("--strategy").value_or(O.Strategy);
  R3_TRY(checkStrategy(O.Strategy));
  R3_TRY(parseCounts(A, O));
  auto Format = choiceValue(A, "--format", {"table", "json"}, "table");
  if (!Format)
    return Format.takeError();
  O.Format = *Format;
  return O;
}

json optionalJson(const std::optional<double> &V) {
  return V ? json(*V) : json(nullptr);
}

json countJson(const std::optional<size_t> &N) {
  return N ? json(*N) : json(nullptr);
}

/// A count held in a double (space sizes): an integer while exact.
json countJson(double N) {
  return N < 9007199254740992.0 ? json(static_cast<uint64_t>(N)) : json(N);
}

json resultJson(const search::TuningCache &C, const SimOptions &O,
                const search::SimulationTrace &T) {
  const search::Space &S = C.SearchSpace;
  std::optional<double> Best = T.best();
  json Trace = json::array(), BestAt = json::object();
  for (const search::SimulatedEvaluation &E : T.Evaluations)
    Trace.push_back(optionalJson(E.Value));
  for (size_t K : Milestones)
    BestAt[std::to_string(K)] = optionalJson(search::bestAt(T, K));
  auto BestIt = std::find_if(
      T.Evaluations.begin(), T.Evaluations.end(),
      [&](const search::SimulatedEvaluation &E) { return E.Value == Best; });
  return {
      {"cache", C.Path},
      {"kernel", C.KernelName},
      {"device", C.DeviceName},
      {"space_size", countJson(C.combinations())},
      {"valid_points", S.Allowed.size()},
      {"failing_points", C.failures()},
      {"strategy", O.Strategy},
      {"seed", O.Seed},
      {"batch", O.Batch},
      {"budget", O.Budget},
      {"evaluations", T.Evaluations.size()},
      {"exhausted", T.Exhausted},
      {"best_ms", optionalJson(Best)},
      {"best_config", Best ? json(S.describe(BestIt->P)) : json(nullptr)},
      {"optimum_ms", C.OptimumMs},
      {"optimum_config", S.describe(S.Allowed[C.OptimumIndex])},
      {"best_over_optimum", Best ? json(*Best / C.OptimumMs) : json(nullptr)},
      {"evals_to_5pct",
       countJson(search::evaluationsToWithin(T, C.OptimumMs, 5))},
      {"evals_to_1pct",
       countJson(search::evaluationsToWithin(T, C.OptimumMs, 1))},
      {"best_at", BestAt},
      {"trace", Trace}};
}

std::string msText(const json &V) {
  if (V.is_null())
    return "-";
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.4g ms", V.get<double>());
  return Buf;
}

std::string text(const json &V) {
  if (V.is_null())
    return "-";
  return V.is_string() ? V.get<std::string>() : V.dump();
}

void row(const char *Label, const std::string &Value) {
  std::printf("%-20s %s\n", Label, Value.c_str());
}

std::string ratioText(const json &V) {
  if (V.is_null())
    return "-";
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.4f", V.get<double>());
  return Buf;
}

/// What was searched, and how.
void printSetup(const json &J) {
  row("kernel:", text(J["kernel"]));
  row("device:", text(J["device"]));
  row("space size:", text(J["space_size"]));
  row("valid points:",
      text(J["valid_points"]) + " (" + text(J["failing_points"]) + " fail)");
  row("strategy:", text(J["strategy"]) + " (seed " + text(J["seed"]) +
                       ", batch " + text(J["batch"]) + ")");
  row("budget:", text(J["budget"]));
}

void printTable(const json &J) {
  printSetup(J);
  row("evaluations:",
      text(J["evaluations"]) +
          (J["exhausted"].get<bool>() ? " (space exhausted)" : ""));
  row("best found:",
      msText(J["best_ms"]) +
          (J["best_ms"].is_null() ? "" : " (" + text(J["best_config"]) + ")"));
  row("optimum:",
      msText(J["optimum_ms"]) + " (" + text(J["optimum_config"]) + ")");
  row("best/optimum:", ratioText(J["best_over_optimum"]));
  row("evals to within 5%:", text(J["evals_to_5pct"]));
  row("evals to within 1%:", text(J["evals_to_1pct"]));
  for (size_t K : Milestones) {
    std::string Label = "best at " + std::to_string(K) + ":";
    row(Label.c_str(), msText(J["best_at"][std::to_string(K)]));
  }
}

} // namespace

int runTuneSimulate(const ParsedArgs &A) {
  auto O = parseSimOptions(A);
  if (!O)
    return usageError(O.error().message(), "tune");
  auto C = search::loadTuningCache(O->Cache);
  if (!C)
    return fail(C.error());
  auto S = search::makeStrategy(O->Strategy, C->SearchSpace,
                                search::StrategyOptions{O->Seed, 0});
  if (!S)
    return fail(S.error());
  search::SimulationTrace T = search::simulate(**S, *C, O->Budget, O->Batch);
  json J = resultJson(*C, *O, T);
  if (O->Format == "json")
    std::printf("%s\n", J.dump(2).c_str());
  else
    printTable(J);
  return ExitSuccess;
}

} // namespace r3::cli
