// File helpers: writing a file under a temporary name and renaming it into
// place only when it is complete, so that a killed writer never leaves a file
// that reads as valid.
#pragma once

#include "support/Error.h"

#include <string>

namespace r3 {

/// A temporary path beside Final, unique to this process: "Final.tmp.<pid>".
std::string temporaryPathFor(const std::string &Final);

/// Flushes Path's data to disk (fsync) and renames it to Final atomically.
Error commitTemporary(const std::string &Path, const std::string &Final);

/// Whether a file or directory exists at Path.
bool pathExists(const std::string &Path);

} // namespace r3
