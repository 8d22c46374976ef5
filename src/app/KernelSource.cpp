// Finding a kernel's definition in a source tree (KernelSource.h). A scan,
// not a parser: comments and string literals are blanked out, then every
// "Name (" whose parameter list closes and is followed by a body is a
// definition. Macros that build kernel names are not seen; such a kernel is
// tuned on its recorded code.
#include "app/KernelSource.h"

#include "support/FileUtil.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

namespace r3::app {

namespace fs = std::filesystem;

namespace {
bool identChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
}

/// The position after the parenthesis that closes the one at Open, or npos.
size_t closing(const std::string &T, size_t Open) {
  int Depth = 0;
  for (size_t I = Open; I < T.size(); ++I) {
    Depth += T[I] == '(' ? 1 : T[I] == ')' ? -1 : 0;
    if (Depth == 0)
      return I + 1;
  }
  return std::string::npos;
}

/// Whether a body follows Pos: white space, then '{' (qualifiers such as
/// const, noexcept or __attribute__((...)) in between are allowed).
bool bodyFollows(const std::string &T, size_t Pos) {
  while (Pos < T.size()) {
    char C = T[Pos];
    if (C == '{')
      return true;
    if (C == ';' || C == '}' || C == '=' || C == ',' || C == ')')
      return false;
    if (C == '(') {
      Pos = closing(T, Pos);
      continue;
    }
    ++Pos;
  }
  return false;
}

/// Whether the declaration that ends at Pos says __global__.
bool isGlobal(const std::string &T, size_t Pos) {
  size_t Start = T.find_last_of(";}", Pos);
  Start = Start == std::string::npos ? 0 : Start;
  return T.find("__global__", Start) < Pos;
}

bool sourceFile(const fs::path &P) {
  static const std::set<std::string> Ext = {
      ".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp", ".cuh", ".hxx", ".inl"};
  return Ext.count(P.extension().string()) != 0;
}
} // namespace

namespace {
/// definitionLines on text already blanked.
std::vector<size_t> linesIn(const std::string &T, const std::string &Name,
                            bool Global) {
  std::vector<size_t> Lines;
  if (Name.empty())
    return Lines;
  for (size_t At = T.find(Name); At != std::string::npos;
       At = T.find(Name, At + 1)) {
    size_t End = At + Name.size();
    if ((At > 0 && identChar(T[At - 1])) ||
        (End < T.size() && identChar(T[End])))
      continue;
    size_t Open = T.find_first_not_of(" \t\r\n", End);
    if (Open == std::string::npos || T[Open] != '(')
      continue;
    size_t Close = closing(T, Open);
    if (Close == std::string::npos || !bodyFollows(T, Close))
      continue;
    if (Global && !isGlobal(T, At))
      continue;
    Lines.push_back(1 + std::count(T.begin(), T.begin() + At, '\n'));
  }
  return Lines;
}
} // namespace

std::vector<size_t> definitionLines(const std::string &Text,
                                    const std::string &Name, bool Global) {
  return linesIn(blankedCode(Text), Name, Global);
}

Expected<SourceTree> treeUnder(const std::string &Dir) {
  std::error_code Ec;
  if (!fs::is_directory(Dir, Ec))
    return makeError("--source-dir '", Dir, "' is not a folder");
  SourceTree T;
  T.Root = fs::absolute(Dir).lexically_normal().string();
  auto It = fs::recursive_directory_iterator(
      Dir, fs::directory_options::skip_permission_denied, Ec);
  for (; !Ec && It != fs::recursive_directory_iterator(); It.increment(Ec)) {
    std::string Name = It->path().filename().string();
    if (It->is_directory(Ec) && Name.size() > 1 && Name[0] == '.') {
      It.disable_recursion_pending();
      continue;
    }
    if (It->is_regular_file(Ec) && sourceFile(It->path()) &&
        It->file_size(Ec) < (8u << 20))
      T.Files.push_back(fs::absolute(It->path()).lexically_normal().string());
  }
  if (Ec)
    return makeError("cannot read the source tree '", Dir, "': ", Ec.message());
  std::sort(T.Files.begin(), T.Files.end());
  return T;
}

Expected<SourceTree> treeOfDatabase(const std::string &Database) {
  auto Text = readWholeFile(Database, "compilation database");
  if (!Text)
    return Text.takeError();
  nlohmann::json J = nlohmann::json::parse(*Text, nullptr, false);
  if (J.is_discarded() || !J.is_array())
    return makeError(Database, ": expected a JSON array of compile commands");
  SourceTree T;
  T.Database = fs::absolute(Database).lexically_normal().string();
  T.Root = T.Database;
  std::set<std::string> Seen;
  for (const auto &E : J) {
    if (!E.is_object() || !E.contains("file") || !E["file"].is_string())
      continue;
    fs::path F = E["file"].get<std::string>();
    if (F.is_relative() && E.contains("directory") &&
        E["directory"].is_string())
      F = fs::path(E["directory"].get<std::string>()) / F;
    std::string Abs = fs::absolute(F).lexically_normal().string();
    if (Seen.insert(Abs).second)
      T.Files.push_back(Abs);
  }
  return T;
}

std::optional<std::string> findDatabase(const std::string &Dir) {
  for (const char *Sub : {"", "build"}) {
    fs::path P = fs::path(Dir) / Sub / "compile_commands.json";
    std::error_code Ec;
    if (fs::is_regular_file(P, Ec))
      return fs::absolute(P).lexically_normal().string();
  }
  return std::nullopt;
}

Expected<std::vector<std::optional<Definition>>>
findDefinitions(const SourceTree &Tree, const std::vector<std::string> &Names,
                bool Global) {
  // Each file is read and blanked once, whatever the number of kernels.
  std::vector<std::vector<Definition>> Found(Names.size());
  for (const std::string &F : Tree.Files) {
    auto Text = readWholeFile(F, "source file");
    if (!Text)
      continue; // a listed file that is gone defines nothing
    std::string T = blankedCode(*Text);
    for (size_t I = 0; I < Names.size(); ++I)
      for (size_t Line : linesIn(T, Names[I], Global))
        Found[I].push_back({F, Line});
  }
  std::vector<std::optional<Definition>> Out;
  for (size_t I = 0; I < Names.size(); ++I) {
    const std::vector<Definition> &Ds = Found[I];
    for (const Definition &D : Ds)
      if (D.File != Ds[0].File)
        return makeError("kernel '", Names[I], "' is defined in two files of ",
                         Tree.Root, ": ", Ds[0].File, ":", Ds[0].Line, " and ",
                         D.File, ":", D.Line,
                         "; r3 cannot tell which one the application built "
                         "(give --compile-commands, or a narrower "
                         "--source-dir)");
    Out.push_back(Ds.empty() ? std::nullopt : std::optional(Ds[0]));
  }
  return Out;
}

Expected<std::optional<Definition>>
findDefinition(const SourceTree &Tree, const std::string &Name, bool Global) {
  auto Ds = findDefinitions(Tree, {Name}, Global);
  if (!Ds)
    return Ds.takeError();
  return Ds->front();
}

} // namespace r3::app
