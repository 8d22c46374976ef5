// Which launches `r3 record` records: kernels chosen by regular expressions
// over their mangled or demangled names, and launches chosen by their ordinal
// (the kernel's 0-based launch count in the application). Used inside the
// recorded process at every launch, so a decision is a map lookup once a
// kernel's name has been matched the first time.
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

namespace r3 {

/// The launches of each selected kernel to record. Without --launch/--launches
/// only the first launch at or after First is recorded.
struct LaunchRange {
  uint64_t First = 0;
  std::optional<uint64_t> Last;        ///< inclusive
  std::optional<uint64_t> MaxLaunches; ///< per kernel
};

/// Builds the range from the command line's --launch N, --launches A-B,
/// --skip K and --max-launches K (any may be absent); errors name the option.
Expected<LaunchRange>
parseLaunchRange(const std::optional<std::string> &Launch,
                 const std::optional<std::string> &Launches,
                 const std::optional<std::string> &Skip,
                 const std::optional<std::string> &Max);

class KernelSelector {
public:
  /// Patterns are ECMAScript regular expressions searched in the mangled and in
  /// the demangled name; an invalid one is an error naming it.
  static Expected<KernelSelector>
  create(const std::vector<std::string> &Patterns, LaunchRange Range);

  /// Whether the kernel named Mangled is selected.
  bool selects(const std::string &Mangled);
  /// The same, without remembering it: touches nothing, so any thread may
  /// ask while another counts launches.
  bool matches(const std::string &Mangled) const;
  /// Counts one launch of Mangled; returns whether to record it.
  bool countLaunch(const std::string &Mangled);
  /// How many launches of Mangled were seen and recorded.
  uint64_t launchesSeen(const std::string &Mangled) const;
  uint64_t launchesRecorded(const std::string &Mangled) const;

private:
  struct KernelState {
    bool Selected = false;
    uint64_t Seen = 0, Recorded = 0;
  };
  KernelState &state(const std::string &Mangled);

  std::vector<std::regex> Patterns;
  LaunchRange Range;
  std::unordered_map<std::string, KernelState> Kernels;
};

} // namespace r3
