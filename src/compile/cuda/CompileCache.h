// A content-addressed cache of compile stages, one folder per stage:
//
//   <dir>/cuda/<stage>/<first two hex digits>/<key>.<part>
//
// A key is the SHA-256 of everything that determines the stage's output
// (CompileCache.cpp's callers say what). An entry is a few parts written each
// under a temporary name and renamed into place, so a killed writer never
// leaves a part that reads as complete; an entry with a part missing is a
// miss. A front-end entry also carries a manifest of the files the compiler
// read with their hashes (as ccache's direct mode does): a lookup whose
// manifest no longer matches the files on disk is a miss, so an edited header
// never gives a stale result.
#pragma once

#include "support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

class CompileCache {
public:
  /// A cache under Dir; an empty Dir disables it (every lookup misses, every
  /// store does nothing).
  explicit CompileCache(std::string Dir) : Dir(std::move(Dir)) {}
  bool enabled() const { return !Dir.empty(); }

  /// The parts of entry Key of Stage, all of Parts present, else nothing.
  std::optional<std::map<std::string, std::string>>
  lookup(const std::string &Stage, const std::string &Key,
         const std::vector<std::string> &Parts) const;

  /// Stores the parts of an entry (each written atomically).
  Error store(const std::string &Stage, const std::string &Key,
              const std::map<std::string, std::string> &Parts) const;

  /// The manifest of Files: "<sha256> <absolute path>" lines; an error when
  /// one cannot be read.
  static Expected<std::string>
  manifestOf(const std::vector<std::string> &Files);

  /// Whether every file of a manifest still has its recorded hash.
  static bool manifestHolds(const std::string &Manifest);

  /// Where entry Key's part Part lives.
  std::string pathOf(const std::string &Stage, const std::string &Key,
                     const std::string &Part) const;

private:
  std::string Dir;
};

/// The contents of a file, or nothing when it cannot be read.
std::optional<std::string> readFileBytes(const std::string &Path);

} // namespace r3
