// Prompt templates: text files in share/prompts (or a folder the campaign
// names) that users edit without rebuilding r3. A template holds
// {{name}} placeholders, replaced by what the campaign knows, and
// {{#name}}...{{/name}} sections, kept only when that value is not empty. A
// name outside promptVariables() is an error at load, reported with its
// line, so a typo does not silently send the model an empty section.
#pragma once

#include "support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace r3::llm {

/// The names a template may use, each with what it holds.
const std::vector<std::pair<std::string, std::string>> &promptVariables();

class PromptTemplate {
public:
  /// Parses Text (Name: where it came from, for messages).
  static Expected<PromptTemplate> parse(std::string Text, std::string Name);
  static Expected<PromptTemplate> load(const std::string &Path);
  /// The text with every placeholder replaced (a missing value: empty).
  std::string render(const std::map<std::string, std::string> &Values) const;
  const std::string &name() const { return Name; }

private:
  struct Piece {
    enum Kind { Text, Value, Open, Close } K = Text;
    std::string S; ///< the text, or the variable's name
  };
  std::vector<Piece> Pieces;
  std::string Name;
};

/// The two templates of a call: the system message and the user message.
struct PromptSet {
  PromptTemplate System, User;
};
/// Reads Dir/system.txt and Dir/mutate.txt.
Expected<PromptSet> loadPrompts(const std::string &Dir);

} // namespace r3::llm
