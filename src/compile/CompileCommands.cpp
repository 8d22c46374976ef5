// Flags from compile_commands.json (CompileCommands.h).
#include "compile/CompileCommands.h"
#include "support/FileUtil.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace r3 {

namespace {

using nlohmann::json;

/// Options whose value is the next word or joined to them, and what they
/// become; a path-valued one is made absolute.
struct ValueOption {
  const char *Name;
  const char *As;
  bool Path;
};

constexpr ValueOption Kept[] = {{"-I", "-I", true},
                                {"--include-path", "-I", true},
                                {"-isystem", "-isystem", true},
                                {"--system-include", "-isystem", true},
                                {"-iquote", "-iquote", true},
                                {"-idirafter", "-idirafter", true},
                                {"-include", "-include", true},
                                {"--pre-include", "-include", true},
                                {"-D", "-D", false},
                                {"--define-macro", "-D", false},
                                {"-U", "-U", false},
                                {"--undefine-macro", "-U", false},
                                {"-std", "-std=", false},
                                {"--std", "-std=", false}};

std::string resolved(const std::string &Value, const std::string &Dir,
                     bool Path) {
  if (!Path || Value.empty() || fs::path(Value).is_absolute() || Dir.empty())
    return Value;
  return (fs::path(Dir) / Value).lexically_normal().string();
}

/// Joins "-I" and "x" as "-Ix" for the single-dash short forms, and keeps
/// the separate word otherwise.
void emit(std::vector<std::string> &Out, const ValueOption &O,
          const std::string &Value, const std::string &Dir) {
  std::string V = resolved(Value, Dir, O.Path);
  std::string As = O.As;
  if (As == "-I" || As == "-D" || As == "-U" || As == "-std=")
    Out.push_back(As + V);
  else {
    Out.push_back(As);
    Out.push_back(V);
  }
}

/// How many words option I uses when it is kept (0: not kept).
size_t keep(const std::vector<std::string> &W, size_t I, const std::string &Dir,
            std::vector<std::string> &Out) {
  const std::string &A = W[I];
  for (const ValueOption &O : Kept) {
    std::string Name = O.Name;
    if (A == Name) {
      if (I + 1 >= W.size())
        return 1;
      emit(Out, O, W[I + 1], Dir);
      return 2;
    }
    if (A.compare(0, Name.size() + 1, Name + "=") == 0) {
      emit(Out, O, A.substr(Name.size() + 1), Dir);
      return 1;
    }
    bool Short = Name.size() == 2;
    if (Short && A.size() > 2 && A.compare(0, 2, Name) == 0) {
      emit(Out, O, A.substr(2), Dir);
      return 1;
    }
  }
  return 0;
}

Expected<std::string> readDatabase(const std::string &Path) {
  return readWholeFile(Path, "compile commands");
}

std::string canonical(const std::string &P, const std::string &Dir) {
  fs::path Full = fs::path(P).is_absolute() ? fs::path(P) : fs::path(Dir) / P;
  std::error_code EC;
  fs::path C = fs::weakly_canonical(Full, EC);
  return (EC ? Full.lexically_normal() : C).string();
}

std::vector<std::string> wordsOf(const json &Entry) {
  if (Entry.contains("arguments") && Entry["arguments"].is_array()) {
    std::vector<std::string> W;
    for (const json &A : Entry["arguments"])
      if (A.is_string())
        W.push_back(A.get<std::string>());
    return W;
  }
  if (Entry.contains("command") && Entry["command"].is_string())
    return splitCommandLine(Entry["command"].get<std::string>());
  return {};
}

std::string stringField(const json &Entry, const char *Key) {
  auto It = Entry.find(Key);
  return It != Entry.end() && It->is_string() ? It->get<std::string>() : "";
}

} // namespace

std::vector<std::string> splitCommandLine(const std::string &Text) {
  std::vector<std::string> Words;
  std::string Cur;
  bool InWord = false;
  char Quote = 0;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (Quote == '\'' && C != '\'') {
      Cur += C;
    } else if (C == '\\' && Quote != '\'' && I + 1 < Text.size()) {
      Cur += Text[++I];
      InWord = true;
    } else if (Quote && C == Quote) {
      Quote = 0;
    } else if (Quote) {
      Cur += C;
    } else if (C == '\'' || C == '"') {
      Quote = C;
      InWord = true;
    } else if (C == ' ' || C == '\t' || C == '\n') {
      if (InWord)
        Words.push_back(std::move(Cur));
      Cur.clear();
      InWord = false;
    } else {
      Cur += C;
      InWord = true;
    }
  }
  if (InWord)
    Words.push_back(std::move(Cur));
  return Words;
}

std::vector<std::string> deviceFlags(const std::vector<std::string> &Words,
                                     const std::string &Directory) {
  std::vector<std::string> Out;
  for (size_t I = 1; I < Words.size();) {
    size_t Used = keep(Words, I, Directory, Out);
    I += Used ? Used : 1;
  }
  return Out;
}

Expected<std::vector<std::string>>
flagsFromCompileCommands(const std::string &Database,
                         const std::string &Source) {
  std::string Text;
  R3_TRY(moveInto(readDatabase(Database), Text));
  return flagsFromCompileCommandsText(Text, Database, Source);
}

Expected<std::vector<std::string>>
flagsFromCompileCommandsText(const std::string &Text,
                             const std::string &Database,
                             const std::string &Source) {
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_array())
    return makeError(Database, ": expected a JSON array of compile commands");
  std::string Want = canonical(Source, fs::current_path().string());
  for (const json &Entry : J) {
    if (!Entry.is_object())
      continue;
    std::string Dir = stringField(Entry, "directory");
    std::string File = stringField(Entry, "file");
    if (File.empty() || canonical(File, Dir) != Want)
      continue;
    return deviceFlags(wordsOf(Entry), Dir);
  }
  return makeError(Database, ": no entry for '", Source, "' (", J.size(),
                   " entries); pass the flags with --cflags instead");
}

} // namespace r3
