// A brute-forced tuning cache (Kernel Tuner's cache-file format): every valid
// configuration of one kernel's tuning space with its measured time, so that
// a search strategy can be evaluated by lookup instead of on a GPU. The cache
// becomes a search::Space whose Allowed list is the cache's entries; entries
// that failed (did not compile, crashed) are valid points without a time.
#pragma once

#include "search/Space.h"
#include "support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace r3::search {

/// The outcome recorded for one configuration.
struct CacheEntry {
  /// The mean time in ms; none when the configuration failed.
  std::optional<double> TimeMs;
  /// Why it failed, as the cache says ("CompileFailedConfig"); empty when it
  /// has a time.
  std::string Failure;
};

struct TuningCache {
  std::string Path;
  std::string DeviceName, KernelName;
  /// One Ordinal parameter per tuning parameter, in the cache's order
  /// (tune_params_keys); numeric domains sorted ascending. Allowed holds
  /// every entry, failures included, in the order of the file.
  Space SearchSpace;
  /// Per point of SearchSpace.Allowed (same index), its outcome.
  std::vector<CacheEntry> Entries;
  /// The best time of the cache and the index of its point in Allowed.
  double OptimumMs = 0;
  size_t OptimumIndex = 0;

  /// The outcome of P, or null when P is not in the cache (an invalid
  /// configuration); a probe of SearchSpace.Allowed's index.
  const CacheEntry *lookup(const Point &P) const;
  /// How many entries failed.
  size_t failures() const;
  /// The number of combinations of the parameters' domains, valid or not.
  double combinations() const;
};

/// Reads a cache file, plain JSON or gzip'd JSON (told apart by the gzip
/// magic bytes, not by the name). Errors name the file: missing or
/// unreadable, neither gzip nor JSON, a missing key, an entry whose value is
/// not in its parameter's domain, an empty cache, no entry with a time.
Expected<TuningCache> loadTuningCache(const std::string &Path);
/// The same from the JSON text of a cache (already inflated); Path only
/// names it in messages.
Expected<TuningCache> parseTuningCache(const std::string &Text,
                                       const std::string &Path);

} // namespace r3::search
