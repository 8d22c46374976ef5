// What an LLM reply becomes: a kernel source, or the reason it is not one.
// Replies are untrusted: a model's text is compiled as device code only and
// checked before anything runs it. A reply is either a
// whole source in a fenced code block or SEARCH/REPLACE blocks applied to the
// parent's text (the two forms OpenEvolve and Aider use); either way the
// result must still define the kernel with the parent's signature, must not
// add host code (a main, process or file system calls, code that runs at
// load; on CUDA, any function that is not __global__ or __device__), and may
// include only what the original includes or files inside the kernel's own
// include folders. A rejected reply is an llm_invalid outcome whose reason
// goes back to the model in the next prompts of that lineage.
#pragma once

#include "support/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace r3::llm {

enum class KernelLanguage { Host, Cuda };

/// What a reply is checked against.
struct ReplyRules {
  std::string Kernel; ///< the function's name as written in the source
  std::string Parent; ///< the parent's text: diffs apply to it
  /// The include lines (the part after #include, "<math.h>") the original
  /// source has; these stay allowed.
  std::vector<std::string> Includes;
  /// Folders (absolute) whose files a quoted #include may name: the
  /// source's own folder and the kernel's -I folders.
  std::vector<std::string> IncludeDirs;
  KernelLanguage Language = KernelLanguage::Host;
  size_t MaxBytes = 256 * 1024;
};

struct ParsedReply {
  std::string Source;
  enum class Form { Full, Diff } Kind = Form::Full;
};

/// The source a reply gives, checked against the rules; the error's message
/// is the reason it was rejected ("the reply contains no code", ...).
Expected<ParsedReply> parseReply(std::string_view Reply, const ReplyRules &R);

/// The kernel's signature in a source: the text from the end of the previous
/// declaration to the parameter list's closing parenthesis, comments
/// removed and whitespace normalised ("void matmul(int n, const double *a)"
/// gives "void matmul(int n,const double*a)"). An error when the source has
/// no definition of Name, or more than one.
Expected<std::string> kernelSignature(std::string_view Source,
                                      std::string_view Name);

/// The include lines of a source ("<math.h>", "\"tile.h\"").
std::vector<std::string> includeLines(std::string_view Source);

/// The base name of a kernel as a source defines it: "ns::f(int)" and
/// "_Z1fi" become "f"; a plain C name is itself.
std::string kernelBaseName(std::string_view Name);

} // namespace r3::llm
