// Kernel and launch selection for recording.
#include "record/Selection.h"

#include "support/Demangle.h"
#include "support/StringUtil.h"

namespace r3 {

namespace {
Expected<uint64_t> number(const std::string &Option, const std::string &Text) {
  auto V = parseUnsigned(Text);
  if (!V)
    return Error::make(Option + " expects a non-negative integer, got '" +
                       Text + "'");
  return *V;
}

Error parseInterval(const std::string &Text, LaunchRange &R) {
  size_t Dash = Text.find('-');
  if (Dash == std::string::npos)
    return Error::make("--launches expects A-B (for example 3-7), got '" +
                       Text + "'");
  R3_TRY(moveInto(number("--launches", Text.substr(0, Dash)), R.First));
  uint64_t Last = 0;
  R3_TRY(moveInto(number("--launches", Text.substr(Dash + 1)), Last));
  if (Last < R.First)
    return Error::make("--launches " + Text + ": the range is empty (B < A)");
  R.Last = Last;
  return Error::success();
}
} // namespace

Expected<LaunchRange>
parseLaunchRange(const std::optional<std::string> &Launch,
                 const std::optional<std::string> &Launches,
                 const std::optional<std::string> &Skip,
                 const std::optional<std::string> &Max) {
  LaunchRange R;
  if (Launch && Launches)
    return Error::make("--launch and --launches exclude each other");
  if (Skip && (Launch || Launches))
    return Error::make("--skip applies only without --launch or --launches");
  if (Launch) {
    R3_TRY(moveInto(number("--launch", *Launch), R.First));
    R.Last = R.First;
  }
  if (Launches)
    R3_TRY(parseInterval(*Launches, R));
  if (Skip)
    R3_TRY(moveInto(number("--skip", *Skip), R.First));
  if (Max) {
    uint64_t K = 0;
    R3_TRY(moveInto(number("--max-launches", *Max), K));
    if (K == 0)
      return Error::make("--max-launches must be at least 1");
    R.MaxLaunches = K;
  }
  if (!R.Last && !R.MaxLaunches)
    R.MaxLaunches = 1; // by default, the first launch at or after First
  return R;
}

Expected<KernelSelector>
KernelSelector::create(const std::vector<std::string> &Patterns,
                       LaunchRange Range) {
  KernelSelector S;
  S.Range = Range;
  for (const std::string &P : Patterns) {
    try {
      S.Patterns.emplace_back(P, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error &E) {
      return Error::make("--kernel '" + P +
                         "': not a valid regular expression (" + E.what() +
                         ")");
    }
  }
  return S;
}

KernelSelector::KernelState &KernelSelector::state(const std::string &Mangled) {
  auto [It, New] = Kernels.try_emplace(Mangled);
  if (New)
    It->second.Selected = matches(Mangled);
  return It->second;
}

bool KernelSelector::matches(const std::string &Mangled) const {
  std::string Demangled = demangle(Mangled);
  for (const std::regex &P : Patterns)
    if (std::regex_search(Mangled, P) ||
        (!Demangled.empty() && std::regex_search(Demangled, P)))
      return true;
  return false;
}

bool KernelSelector::selects(const std::string &Mangled) {
  return state(Mangled).Selected;
}

bool KernelSelector::countLaunch(const std::string &Mangled) {
  KernelState &K = state(Mangled);
  uint64_t Ordinal = K.Seen++;
  if (!K.Selected || Ordinal < Range.First ||
      (Range.Last && Ordinal > *Range.Last))
    return false;
  if (Range.MaxLaunches && K.Recorded >= *Range.MaxLaunches)
    return false;
  ++K.Recorded;
  return true;
}

uint64_t KernelSelector::launchesSeen(const std::string &Mangled) const {
  auto It = Kernels.find(Mangled);
  return It == Kernels.end() ? 0 : It->second.Seen;
}

uint64_t KernelSelector::launchesRecorded(const std::string &Mangled) const {
  auto It = Kernels.find(Mangled);
  return It == Kernels.end() ? 0 : It->second.Recorded;
}

} // namespace r3
