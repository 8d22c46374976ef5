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

/// The whole of the file at Path; an error names it and says what it was to
/// be (What: "tuned cubin", "r3 run plan", ...). libc only: the code r3 puts
/// into applications uses it too.
Expected<std::string> readWholeFile(const std::string &Path,
                                    const std::string &What);

/// A new folder $TMPDIR/<Stem>-XXXXXX (TMPDIR defaults to /tmp), for the
/// caller to remove.
Expected<std::string> makeTemporaryFolder(const std::string &Stem);

/// Whether a file or directory exists at Path.
bool pathExists(const std::string &Path);

/// Success when Path is a regular file; else "source file 'P' does not
/// exist" or "... is not a regular file" (What names the file's role).
Error checkRegularFile(const std::string &Path,
                       const std::string &What = "source file");

} // namespace r3
