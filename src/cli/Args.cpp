// Option parsing for r3's subcommands.
#include "cli/Args.h"

#include "support/StringUtil.h"

namespace r3::cli {

const OptionSpec &helpOption() {
  static const OptionSpec Help{"--help", "-h", Arity::Flag, "",
                               "show this help"};
  return Help;
}

std::optional<std::string> ParsedArgs::value(std::string_view Name) const {
  auto It = Values.find(Name);
  if (It == Values.end() || It->second.empty())
    return std::nullopt;
  return It->second.back();
}

namespace {

const OptionSpec *findOption(const CommandSpec &C, std::string_view Word) {
  if (Word == helpOption().Name || Word == helpOption().Short)
    return &helpOption();
  for (const OptionSpec &O : C.Options)
    if (Word == O.Name || (!O.Short.empty() && Word == O.Short))
      return &O;
  return nullptr;
}

Error unknownOption(const CommandSpec &C, const std::string &Word) {
  std::vector<std::string> Names{std::string(helpOption().Name)};
  for (const OptionSpec &O : C.Options)
    Names.emplace_back(O.Name);
  std::string Msg =
      "unknown option '" + Word + "' for 'r3 " + std::string(C.Name) + "'";
  if (auto Best = closestMatch(Word, Names))
    Msg += "; did you mean '" + *Best + "'?";
  return Error::make(Msg);
}

/// Handles one option word at Args[I]; advances I past its value.
Error parseOption(const CommandSpec &C, const std::vector<std::string> &Args,
                  size_t &I, ParsedArgs &Out) {
  std::string Word = Args[I];
  std::optional<std::string> Inline;
  if (size_t Eq = Word.find('=');
      Eq != std::string::npos && Word.starts_with("--")) {
    Inline = Word.substr(Eq + 1);
    Word = Word.substr(0, Eq);
  }
  const OptionSpec *O = findOption(C, Word);
  if (!O)
    return unknownOption(C, Word);
  std::string Key(O->Name);
  if (O->Takes == Arity::Flag) {
    if (Inline)
      return Error::make("option '" + Key + "' takes no value");
    Out.Values[Key].push_back("");
    return Error::success();
  }
  if (Inline) {
    Out.Values[Key].push_back(*Inline);
    return Error::success();
  }
  if (I + 1 >= Args.size())
    return Error::make("option '" + Key + "' needs a value (" +
                       std::string(O->Metavar) + ")");
  Out.Values[Key].push_back(Args[++I]);
  return Error::success();
}
} // namespace

Expected<ParsedArgs> parseArgs(const CommandSpec &C,
                               const std::vector<std::string> &Args) {
  ParsedArgs Out;
  Out.Command = &C;
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &Word = Args[I];
    if (Word == "--") {
      if (!C.TakesCommandLine)
        return Error::make("'r3 " + std::string(C.Name) + "' takes no '--'");
      Out.Trailing.assign(Args.begin() + I + 1, Args.end());
      break;
    }
    if (Word.size() > 1 && Word[0] == '-') {
      R3_TRY(parseOption(C, Args, I, Out));
      continue;
    }
    Out.Positional.push_back(Word);
  }
  return Out;
}

Expected<std::string> choiceValue(const ParsedArgs &A, std::string_view Name,
                                  const std::vector<std::string> &Choices,
                                  const std::string &Default) {
  auto V = A.value(Name);
  if (!V)
    return Default;
  for (const std::string &C : Choices)
    if (*V == C)
      return *V;
  std::string Msg = "option '" + std::string(Name) + "' must be one of " +
                    join(Choices, ", ") + ", got '" + *V + "'";
  if (auto Best = closestMatch(*V, Choices))
    Msg += "; did you mean '" + *Best + "'?";
  return Error::make(Msg);
}

} // namespace r3::cli
