// Line diffs: the shortest edit script between two texts (Myers' O(ND)
// algorithm in linear space) and the unified format that patch(1) and
// `git apply` read. `r3 export` writes the best variant's source as such a
// diff against the kernel's original source.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace r3 {

enum class DiffKind { Equal, Delete, Insert };

/// One step of an edit script. Old and New are the line indexes the step is
/// at in the old and the new text: an Equal step keeps Old[Old] (== New[New]),
/// a Delete removes Old[Old], an Insert adds New[New].
struct DiffOp {
  DiffKind Kind;
  size_t Old, New;
};

/// The lines of Text, each with its "\n" (the last may lack one).
std::vector<std::string_view> splitLines(std::string_view Text);

/// A shortest edit script from A to B: every line of A is kept or deleted and
/// every line of B kept or inserted, in order, with as few deletions and
/// insertions as possible.
std::vector<DiffOp> diffLines(const std::vector<std::string_view> &A,
                              const std::vector<std::string_view> &B);

/// The unified diff of Old to New ("--- OldName", "+++ NewName", hunks with
/// Context lines of context; "\ No newline at end of file" where a text ends
/// without one); empty when the texts are equal.
std::string unifiedDiff(std::string_view Old, std::string_view New,
                        std::string_view OldName, std::string_view NewName,
                        unsigned Context = 3);

} // namespace r3
