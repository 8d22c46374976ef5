// The kernel alone: a kernel's translation unit without the top-level
// function definitions the kernel does not reach (the application's other
// kernels, its host code), so that a variant compiles only what it needs
// and a model reads only the kernel. Types, variables, macros, includes and
// declarations all stay; a function stays when its name appears in what
// stays (the kernel, the kept functions, the macros they use, and every
// top-level text that is not a function definition). This is a scanner over
// the text with comments and literals blanked, not a parser: it keeps too
// much rather than too little, and the campaign compiles the result before
// it uses it, falling back to the whole file.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace r3 {

/// A top-level function definition (in namespaces and extern "C" blocks
/// too): its name and its extent in the text, from the end of what came
/// before it (its comments and template header included) to its closing
/// brace's line end.
struct TopFunction {
  std::string Name;
  size_t Begin = 0, End = 0;
};

std::vector<TopFunction> topLevelFunctions(const std::string &Text);

struct KernelAlone {
  /// The file without what is dropped: each dropped function leaves its
  /// newlines, so that every kept line keeps its number.
  std::string Text;
  size_t DroppedLines = 0;
  std::vector<std::string> Kept;    ///< functions kept besides the kernel
  std::vector<std::string> Dropped; ///< functions dropped, in file order
  bool Found = false;               ///< the file defines Kernel
};

/// Text without the functions Kernel (its base name) does not reach.
KernelAlone kernelAlone(const std::string &Text, const std::string &Kernel);

} // namespace r3
