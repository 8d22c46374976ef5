// The bookkeeping every strategy shares and the table of strategies by name
// (campaign files and `r3 tune --strategy` name them).
#include "search/Strategy.h"

#include "support/StringUtil.h"

#include <algorithm>
#include <array>

namespace r3::search {

void Observations::observe(const Point &P, std::optional<double> Value) {
  Pending.erase(P);
  if (Observed.insert(P).second) {
    Entries.push_back({P, Value});
    return;
  }
  // A point observed again (a re-measurement) keeps one entry, the latest
  // outcome, so that models do not count it twice.
  for (Entry &E : Entries)
    if (E.P == P)
      E.Value = Value;
}

std::optional<double> Observations::best() const {
  std::optional<double> Best;
  for (const Entry &E : Entries)
    if (E.Value && (!Best || *E.Value < *Best))
      Best = E.Value;
  return Best;
}

namespace {

constexpr std::array<std::string_view, 6> Names = {"portfolio", "bo",  "random",
                                                   "grid",      "tpe", "ga"};

/// Other names users reach for, mapped to the strategy they mean; used only
/// for the "did you mean" suggestion.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> Aliases =
    {{{"bayes", "bo"},
      {"genetic", "ga"},
      {"evolutionary", "ga"},
      {"bayesian", "bo"},
      {"bayesopt", "bo"},
      {"exhaustive", "grid"},
      {"brute", "grid"},
      {"parzen", "tpe"}}};

std::string suggestion(std::string_view Name) {
  std::vector<std::string> Candidates(Names.begin(), Names.end());
  for (auto [Alias, Target] : Aliases)
    Candidates.emplace_back(Alias);
  std::optional<std::string> Match = closestMatch(Name, Candidates);
  if (!Match)
    return "";
  for (auto [Alias, Target] : Aliases)
    if (*Match == Alias)
      Match = std::string(Target);
  return "; did you mean '" + *Match + "'?";
}

} // namespace

std::span<const std::string_view> strategyNames() { return Names; }

Expected<std::unique_ptr<Strategy>>
makeStrategy(std::string_view Name, const Space &S, const StrategyOptions &O) {
  if (Name == "bo")
    return makeBayesOpt(S, O);
  if (Name == "random")
    return makeRandomSearch(S, O);
  if (Name == "grid")
    return makeGridSearch(S, O);
  if (Name == "tpe")
    return makeTpe(S, O);
  if (Name == "ga")
    return makeGenetic(S, O);
  if (Name == "portfolio")
    return makePortfolio(S, O);
  std::vector<std::string> Known(Names.begin(), Names.end());
  return makeError("unknown strategy '", Name, "'", suggestion(Name),
                   " (known: ", join(Known, ", "), ")");
}

} // namespace r3::search
