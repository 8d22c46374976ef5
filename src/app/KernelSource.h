// Where a kernel's source is, for `r3 tune --app`: the one file of a source
// tree (or of a compilation database's entries) that defines it, and the
// database entry that says how the application compiles that file. A kernel
// is found by its base name (jacobi2d for ns::jacobi2d(int, float*)) followed
// by a parameter list and a body, outside comments; on CUDA the definition
// must be a __global__ function. None found is not an error: the kernel is
// tuned on its recorded code alone. Two files defining it is: r3 cannot know
// which one the application built.
#pragma once

#include "capture/KernelLookup.h"
#include "support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace r3::app {

using r3::baseName; // capture/KernelLookup.h

/// One definition found.
struct Definition {
  std::string File; ///< absolute
  size_t Line = 0;  ///< 1-based
};

/// The definitions of function Name in Text (comments and strings blanked
/// out first); Global: only __global__ ones.
std::vector<size_t> definitionLines(const std::string &Text,
                                    const std::string &Name, bool Global);

/// Where to look: the files a compilation database lists, or every C, C++
/// and CUDA file under a folder (hidden folders skipped).
struct SourceTree {
  std::vector<std::string> Files;
  std::string Database; ///< the compile_commands.json, when there is one
  std::string Root;     ///< what was searched, for messages
};

/// The files of the tree under Dir.
Expected<SourceTree> treeUnder(const std::string &Dir);
/// The files Database lists (absolute), with Dir's files when Dir is given.
Expected<SourceTree> treeOfDatabase(const std::string &Database);
/// The compile_commands.json of a build: in Dir, Dir/build, or none.
std::optional<std::string> findDatabase(const std::string &Dir);

/// For each of Names, the one file that defines it in Tree, none when no file
/// does; an error naming both places when two do. Each file is read once.
Expected<std::vector<std::optional<Definition>>>
findDefinitions(const SourceTree &Tree, const std::vector<std::string> &Names,
                bool Global);
/// The same for one name.
Expected<std::optional<Definition>>
findDefinition(const SourceTree &Tree, const std::string &Name, bool Global);

} // namespace r3::app
