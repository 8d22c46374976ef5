// Prompt templates (see Prompt.h): parsed once into pieces, rendered per
// call. Sections nest; a section whose value is empty drops everything up
// to its close, and the newline after a section tag goes with the tag, so a
// dropped section leaves no blank lines behind.
#include "search/llm/Prompt.h"

#include "support/FileUtil.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace r3::llm {

const std::vector<std::pair<std::string, std::string>> &promptVariables() {
  static const std::vector<std::pair<std::string, std::string>> V = {
      {"kernel", "the kernel's name as its source defines it"},
      {"language", "C, C++ or CUDA"},
      {"fence", "the code fence's language tag: c, cpp or cuda"},
      {"source", "the parent's source text"},
      {"signature", "the kernel's signature, which must not change"},
      {"includes", "the include lines the source may use"},
      {"knobs", "the -D defines the parent compiles with"},
      {"device", "the device and its limits"},
      {"capture", "the recorded launch: its arguments and memory regions"},
      {"limits", "the recorded launch against the GPU's limits: bytes, time, "
                 "bandwidth"},
      {"rewrites", "what r3's automatic rewrites measured"},
      {"verify", "how outputs are compared with the recorded ones"},
      {"baseline_ms", "the recorded code's time"},
      {"parent_ms", "the parent's best time"},
      {"parent_speedup", "the parent's speedup over the recorded code"},
      {"compile_report", "the parent's compile report"},
      {"best", "the best variant so far and what distinguishes it"},
      {"failures", "recent failures of this lineage, with their messages"},
  };
  return V;
}

namespace {
bool known(const std::string &Name) {
  const auto &V = promptVariables();
  return std::any_of(V.begin(), V.end(),
                     [&](const auto &P) { return P.first == Name; });
}

std::string knownNames() {
  std::string Out;
  for (const auto &[Name, What] : promptVariables())
    Out += (Out.empty() ? "" : ", ") + Name;
  return Out;
}

unsigned lineOf(const std::string &Text, size_t Pos) {
  return 1 + unsigned(std::count(Text.begin(), Text.begin() + long(Pos), '\n'));
}
} // namespace

Expected<PromptTemplate> PromptTemplate::parse(std::string Text,
                                               std::string Name) {
  PromptTemplate T;
  T.Name = std::move(Name);
  std::vector<std::string> Open;
  size_t At = 0;
  while (At < Text.size()) {
    size_t B = Text.find("{{", At);
    if (B == std::string::npos) {
      T.Pieces.push_back({Piece::Text, Text.substr(At)});
      break;
    }
    T.Pieces.push_back({Piece::Text, Text.substr(At, B - At)});
    size_t E = Text.find("}}", B + 2);
    if (E == std::string::npos)
      return makeError(T.Name, ":", lineOf(Text, B), ": '{{' is not closed");
    std::string Tag = Text.substr(B + 2, E - B - 2);
    Piece::Kind K = Piece::Value;
    if (!Tag.empty() && (Tag[0] == '#' || Tag[0] == '/')) {
      K = Tag[0] == '#' ? Piece::Open : Piece::Close;
      Tag = Tag.substr(1);
    }
    if (!known(Tag))
      return makeError(
          T.Name, ":", lineOf(Text, B), ": unknown placeholder '{{",
          Text.substr(B + 2, E - B - 2), "}}'; known: ", knownNames());
    if (K == Piece::Open)
      Open.push_back(Tag);
    if (K == Piece::Close && (Open.empty() || Open.back() != Tag))
      return makeError(T.Name, ":", lineOf(Text, B), ": '{{/", Tag,
                       "}}' closes no open '{{#", Tag, "}}'");
    if (K == Piece::Close)
      Open.pop_back();
    At = E + 2;
    if (K != Piece::Value && At < Text.size() && Text[At] == '\n')
      ++At;
    T.Pieces.push_back({K, Tag});
  }
  if (!Open.empty())
    return makeError(T.Name, ": '{{#", Open.back(), "}}' is never closed");
  return T;
}

Expected<PromptTemplate> PromptTemplate::load(const std::string &Path) {
  std::string Text;
  R3_TRY(moveInto(readWholeFile(Path, "prompt template"), Text));
  return parse(Text, Path);
}

std::string
PromptTemplate::render(const std::map<std::string, std::string> &Values) const {
  auto value = [&](const std::string &N) -> const std::string & {
    static const std::string Empty;
    auto It = Values.find(N);
    return It == Values.end() ? Empty : It->second;
  };
  std::string Out;
  unsigned Skipping = 0; // depth of sections being dropped
  for (const Piece &P : Pieces) {
    if (P.K == Piece::Open) {
      Skipping += Skipping || value(P.S).empty();
      continue;
    }
    if (P.K == Piece::Close) {
      Skipping -= Skipping > 0;
      continue;
    }
    if (!Skipping)
      Out += P.K == Piece::Text ? P.S : value(P.S);
  }
  return Out;
}

Expected<PromptSet> loadPrompts(const std::string &Dir) {
  auto System = PromptTemplate::load(Dir + "/system.txt");
  if (!System)
    return System.takeError();
  auto User = PromptTemplate::load(Dir + "/mutate.txt");
  if (!User)
    return User.takeError();
  return PromptSet{std::move(*System), std::move(*User)};
}

} // namespace r3::llm
