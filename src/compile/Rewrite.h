// Automatic source transformations of a kernel, found through clang's AST:
// the outer loop's `rewrite` operator. Each transformation is a knob whose
// first value ("0") is the source as written, so that MAP-Elites, crossover
// and the inner loop search them like any knob and verification judges them:
//
//   R3_RW_UNROLL_L<line>  a loop of the kernel without an unroll pragma:
//                         0 as written, 1, 2, 4, 8 (`#pragma unroll N`), and
//                         -1 (`#pragma unroll`, full) where the trip count is
//                         a constant
//   R3_RW_RESTRICT        the kernel's pointer parameters: 0 as written,
//                         1 `__restrict__` on those whose recorded regions
//                         overlap no other parameter's, 2 also `const` on
//                         those of them the kernel never writes through and
//                         the recorded launch never wrote (read-only loads)
//   R3_RW_GRIDSTRIDE      a CUDA kernel that takes one element per thread
//                         (`i = blockIdx.x * blockDim.x + threadIdx.x`, then
//                         `if (i < E) S` ending the kernel, or `if (i >= E)
//                         return;` followed by the rest): 0 as written, 1 a
//                         grid-stride loop over i, K = 2, 4 the same loop
//                         taking K elements a thread each pass, blockDim.x
//                         apart (thread coarsening). Any grid computes the
//                         same, so the grid becomes a search dimension; the
//                         loop's body must hold no return, barrier, warp
//                         collective or shared memory, and write neither i
//                         nor what E reads.
//
// The kernel's file is compiled as one instrumented text (`instrument`) in
// which each transformation is preprocessor code keyed by its knob; with
// every knob at 0 it is the original program. `resolve` turns an
// instrumented text and knob values back into plain source (r3 export's
// diff). A transformation that does not apply to a kernel is not offered.
#pragma once

#include "support/Error.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

/// What the recorded launch says about one kernel parameter.
struct ParamFact {
  bool Pointer = false;         ///< its value points into a recorded region
  std::optional<size_t> Region; ///< which one
  bool RegionWritten = false;   ///< the launch changed that region
};

/// One transformation site: a knob and where its text goes.
struct RewriteSite {
  enum class Kind { Unroll, Restrict, GridStride } What = Kind::Unroll;
  std::string Knob;                ///< "R3_RW_UNROLL_L12", "R3_RW_RESTRICT"
  std::vector<std::string> Values; ///< "0" (as written) first
  std::string Describe;            ///< "loop at line 12", for messages
  /// Unroll: the start of the loop's line and the loop's indentation.
  size_t LineStart = 0;
  std::string Indent;
  /// Restrict: each parameter's type start and name start, and whether it
  /// may become const.
  struct Param {
    std::string Name;
    size_t TypeBegin = 0, NameBegin = 0;
    bool Const = false;
  };
  std::vector<Param> Params;
  /// GridStride: whole lines [Begin, End) of the text replaced, per value
  /// other than "0", by Alternatives[value] (each ending in a newline); an
  /// empty range inserts the alternatives.
  struct Edit {
    size_t Begin = 0, End = 0;
    std::map<std::string, std::string> Alternatives;
  };
  std::vector<Edit> Edits;
};

/// The knob of the grid-stride transformation, and the elements a thread
/// takes each pass under its value (0: as written, not grid-stride).
inline constexpr const char *GridStrideKnob = "R3_RW_GRIDSTRIDE";
unsigned gridStrideElements(const std::string &Value);

/// The transformations offered for one kernel of one file.
struct RewriteModel {
  std::string Kernel;       ///< base name, as the definition spells it
  size_t DeclLineStart = 0; ///< the line where the definition starts
  std::vector<RewriteSite> Sites;
  /// CUDA: a loop of the kernel reads gridDim (a grid-stride loop), so any
  /// grid computes the same.
  bool GridStride = false;
};

/// The clang arguments that dump the AST of Kernel's definitions as JSON on
/// stdout, to be appended to a syntax-only command line of the file.
std::vector<std::string> astDumpArguments(const std::string &Kernel);

/// The sites of Kernel (its base name) in Text, the contents of File, from
/// clang's JSON AST dump of File (astDumpArguments; File as clang was given
/// it). Facts: per parameter, from the recorded launch (empty: no pointer is
/// known not to alias, so no restrict). An error when the dump holds no
/// definition of Kernel in File.
Expected<RewriteModel> findRewrites(const std::string &AstJson,
                                    const std::string &File,
                                    const std::string &Text,
                                    const std::string &Kernel,
                                    const std::vector<ParamFact> &Facts);

/// findRewrites on the dump that Argv (clang's command line for File,
/// without an action) with astDumpArguments writes.
Expected<RewriteModel> rewritesOf(std::vector<std::string> Argv,
                                  const std::string &File,
                                  const std::string &Text,
                                  const std::string &Kernel,
                                  const std::vector<ParamFact> &Facts);

/// Text with every site as preprocessor code keyed by its knob.
std::string instrument(const std::string &Text, const RewriteModel &M);

/// Plain source from an instrumented text and the knobs' values (a knob
/// not given is 0): instrument(T, M) resolved with no values is T.
std::string resolve(const std::string &Instrumented,
                    const std::map<std::string, std::string> &Knobs);

/// Whether a knob name is a rewrite's.
bool isRewriteKnob(const std::string &Name);

} // namespace r3
