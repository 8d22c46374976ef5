// File helpers: writing a file under a temporary name and renaming it into
// place only when it is complete, so that a killed writer never leaves a file
// that reads as valid.
#pragma once

#include "support/Error.h"

#include <string>
#include <string_view>

namespace r3 {

/// A temporary path beside Final, unique to this process: "Final.tmp.<pid>".
std::string temporaryPathFor(const std::string &Final);

/// Flushes Path's data to disk (fsync) and renames it to Final atomically.
Error commitTemporary(const std::string &Path, const std::string &Final);

/// Writes Text to a temporary file beside Path and renames it into place:
/// Path holds either its old contents or all of Text, never a part.
Error writeFileAtomically(const std::string &Path, std::string_view Text);

/// Whether a file or directory exists at Path.
bool pathExists(const std::string &Path);

/// Success when Path is a regular file; else "source file 'P' does not
/// exist" or "... is not a regular file" (What names the file's role).
Error checkRegularFile(const std::string &Path,
                       const std::string &What = "source file");

} // namespace r3
