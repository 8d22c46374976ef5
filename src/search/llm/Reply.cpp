// Reply parsing and checking (see Reply.h). The checks work on a copy of the
// text in which comments, string and character literals and preprocessor
// lines are blanked (same length, newlines kept), so that code mentioned in
// a comment is not code, and positions still map onto the original. This is
// a scanner, not a compiler: it finds top-level function definitions (an
// identifier, a balanced parameter list, then a body), looking through
// namespace and extern "C" blocks, which is all the signature and host-code
// rules need; what it cannot see, the compiler and the sandbox still stop.
#include "search/llm/Reply.h"

#include "support/Demangle.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>

namespace r3::llm {

namespace {
namespace fs = std::filesystem;

bool isIdentChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
}

/// Skips a literal starting at I (a quote), blanking its contents.
size_t blankLiteral(std::string &Out, size_t I) {
  char Quote = Out[I];
  size_t J = I + 1;
  for (; J < Out.size() && Out[J] != Quote && Out[J] != '\n'; ++J) {
    if (Out[J] == '\\' && J + 1 < Out.size())
      Out[J++] = ' ';
    Out[J] = ' ';
  }
  return J; // the closing quote (kept), or the line's end
}

/// Blanks a preprocessor line starting at I, with its continuations.
size_t blankDirective(std::string &Out, size_t I) {
  size_t J = I;
  for (; J < Out.size() && Out[J] != '\n'; ++J) {
    if (Out[J] == '\\' && J + 1 < Out.size() && Out[J + 1] == '\n')
      ++J; // keep the newline, go on with the next line
    else
      Out[J] = ' ';
  }
  return J;
}

/// The text with comments, literals and preprocessor lines blanked.
std::string blanked(std::string_view Text) {
  std::string Out(Text);
  bool LineStart = true;
  for (size_t I = 0; I < Out.size(); ++I) {
    char C = Out[I];
    if (C == '\n') {
      LineStart = true;
      continue;
    }
    if (LineStart && C == '#') {
      I = blankDirective(Out, I);
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(C)))
      LineStart = false;
    if (C == '/' && I + 1 < Out.size() && Out[I + 1] == '/') {
      for (; I < Out.size() && Out[I] != '\n'; ++I)
        Out[I] = ' ';
      --I;
    } else if (C == '/' && I + 1 < Out.size() && Out[I + 1] == '*') {
      size_t End = Out.find("*/", I + 2);
      End = End == std::string::npos ? Out.size() : End + 2;
      for (; I < End; ++I)
        if (Out[I] != '\n')
          Out[I] = ' ';
      --I;
    } else if (C == '"' || C == '\'') {
      // A digit separator (1'000) is not a character literal.
      if (C == '\'' && I > 0 && std::isxdigit((unsigned char)Out[I - 1]))
        continue;
      I = blankLiteral(Out, I);
    }
  }
  return Out;
}

/// The position of the parenthesis matching the one at Open, or npos.
size_t matchParen(std::string_view S, size_t Open) {
  int Depth = 0;
  for (size_t I = Open; I < S.size(); ++I) {
    if (S[I] == '(')
      ++Depth;
    else if (S[I] == ')' && --Depth == 0)
      return I;
  }
  return std::string_view::npos;
}

size_t skipSpace(std::string_view S, size_t I) {
  while (I < S.size() && std::isspace(static_cast<unsigned char>(S[I])))
    ++I;
  return I;
}

/// After a parameter list: whether a body follows (through qualifiers such
/// as const, noexcept, attributes and a trailing return type).
bool bodyFollows(std::string_view S, size_t I) {
  while (true) {
    I = skipSpace(S, I);
    if (I >= S.size())
      return false;
    if (S[I] == '{')
      return true;
    if (S[I] == '(') { // an attribute's arguments
      size_t Close = matchParen(S, I);
      if (Close == std::string_view::npos)
        return false;
      I = Close + 1;
      continue;
    }
    if (isIdentChar(S[I]) || S[I] == '-' || S[I] == '>' || S[I] == ':' ||
        S[I] == '*' || S[I] == '&' || S[I] == '<' || S[I] == ',') {
      ++I;
      continue;
    }
    return false;
  }
}

/// A function defined at the top level (or in a namespace or extern block).
struct Definition {
  std::string Name;
  size_t Begin = 0;     ///< where its declaration starts (the return type)
  size_t ParamsEnd = 0; ///< its parameter list's ')'
};

/// Whether the '{' at I opens a block whose contents are still top level.
bool transparentBlock(std::string_view S, size_t DeclBegin, size_t I) {
  std::string_view Head = S.substr(DeclBegin, I - DeclBegin);
  return Head.find("namespace") != std::string_view::npos ||
         Head.find("extern") != std::string_view::npos;
}

/// Words followed by parentheses and a brace that are not functions.
const std::set<std::string> &keywords() {
  static const std::set<std::string> W = {"if",
                                          "for",
                                          "while",
                                          "switch",
                                          "catch",
                                          "return",
                                          "sizeof",
                                          "alignof",
                                          "decltype",
                                          "__launch_bounds__",
                                          "__attribute__",
                                          "__declspec",
                                          "alignas",
                                          "static_assert"};
  return W;
}

std::vector<Definition> definitions(std::string_view S) {
  std::vector<Definition> Out;
  std::vector<bool> Opaque; // per open brace: not top level inside
  size_t DeclBegin = 0;
  bool BodyNext = false; // the next '{' opens a function's body
  auto topLevel = [&] {
    return std::none_of(Opaque.begin(), Opaque.end(), [](bool B) { return B; });
  };
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (C == '{') {
      bool Top = topLevel();
      Opaque.push_back(BodyNext || !(Top && transparentBlock(S, DeclBegin, I)));
      BodyNext = false;
      DeclBegin = I + 1;
    } else if (C == '}') {
      if (!Opaque.empty())
        Opaque.pop_back();
      DeclBegin = I + 1;
    } else if (C == ';' && topLevel()) {
      DeclBegin = I + 1;
    } else if (topLevel() && isIdentChar(C) &&
               (I == 0 || !isIdentChar(S[I - 1]))) {
      size_t End = I;
      while (End < S.size() && isIdentChar(S[End]))
        ++End;
      size_t Open = skipSpace(S, End);
      if (Open < S.size() && S[Open] == '(' &&
          !std::isdigit(static_cast<unsigned char>(C))) {
        size_t Close = matchParen(S, Open);
        if (Close == std::string_view::npos)
          return Out;
        std::string Name(S.substr(I, End - I));
        if (bodyFollows(S, Close + 1) && !keywords().count(Name)) {
          Out.push_back({std::move(Name), DeclBegin, Close});
          BodyNext = true;
        }
        I = Close;
        continue;
      }
      I = End - 1;
    }
  }
  return Out;
}

/// Tokens: identifiers and numbers whole, everything else a character.
std::vector<std::string> tokens(std::string_view S) {
  std::vector<std::string> Out;
  for (size_t I = 0; I < S.size();) {
    if (std::isspace(static_cast<unsigned char>(S[I]))) {
      ++I;
      continue;
    }
    size_t J = I + 1;
    if (isIdentChar(S[I]))
      while (J < S.size() && isIdentChar(S[J]))
        ++J;
    Out.emplace_back(S.substr(I, J - I));
    I = J;
  }
  return Out;
}

/// Drops "NAME(...)" token runs (attributes, launch bounds) from Ts.
void dropCalls(std::vector<std::string> &Ts, std::string_view Name) {
  for (size_t I = 0; I < Ts.size();) {
    if (Ts[I] != Name) {
      ++I;
      continue;
    }
    size_t J = I + 1;
    int Depth = 0;
    for (; J < Ts.size(); ++J) {
      Depth += Ts[J] == "(" ? 1 : Ts[J] == ")" ? -1 : 0;
      if (Depth == 0)
        break;
    }
    Ts.erase(Ts.begin() + long(I),
             Ts.begin() + long(std::min(J + 1, Ts.size())));
  }
}

const std::set<std::string> &typeWords() {
  static const std::set<std::string> W = {
      "void",     "char",   "short",    "int",    "long",   "float",
      "double",   "signed", "unsigned", "bool",   "_Bool",  "const",
      "volatile", "size_t", "auto",     "struct", "__half", "half"};
  return W;
}

bool isIdentifier(const std::string &T) {
  return !T.empty() && (std::isalpha((unsigned char)T[0]) || T[0] == '_');
}

/// A parameter without its name: the last identifier goes unless it is a
/// type word or the parameter's only token (or it precedes '[').
std::vector<std::string> unnamed(std::vector<std::string> P) {
  size_t Last = P.size();
  for (size_t I = 0; I < P.size(); ++I)
    if (P[I] == "[") {
      Last = I;
      break;
    }
  if (Last >= 2 && isIdentifier(P[Last - 1]) && !typeWords().count(P[Last - 1]))
    P.erase(P.begin() + long(Last - 1));
  return P;
}

/// What two signatures must share: qualifiers that keep the ABI (restrict,
/// inline, attributes, launch bounds) and parameter names left out.
std::string comparable(std::string_view Signature) {
  std::vector<std::string> Ts = tokens(Signature);
  dropCalls(Ts, "__attribute__");
  dropCalls(Ts, "__launch_bounds__");
  std::erase_if(Ts, [](const std::string &T) {
    return T == "restrict" || T == "__restrict" || T == "__restrict__" ||
           T == "inline" || T == "__inline__" || T == "__forceinline__";
  });
  auto Open = std::find(Ts.begin(), Ts.end(), "(");
  std::string Out;
  for (auto I = Ts.begin(); I != Open; ++I)
    Out += *I + " ";
  std::vector<std::string> Param;
  int Depth = 0;
  auto flush = [&] {
    for (const std::string &T : unnamed(Param))
      Out += T + " ";
    Param.clear();
  };
  for (auto I = Open; I != Ts.end(); ++I) {
    if (*I == "(" && Depth++ == 0) {
      Out += "( ";
      continue;
    }
    if ((*I == ")" && --Depth == 0) || (*I == "," && Depth == 1)) {
      flush();
      Out += *I + " ";
      continue;
    }
    Param.push_back(*I);
  }
  return Out;
}

/// Normalises whitespace: none around punctuation, one between words.
std::string normalised(std::string_view Text) {
  std::string Out;
  for (const std::string &T : tokens(Text)) {
    if (!Out.empty() && isIdentChar(Out.back()) && isIdentChar(T.front()))
      Out += ' ';
    Out += T;
  }
  return Out;
}

std::vector<std::string> lines(std::string_view S) {
  std::vector<std::string> Out;
  size_t B = 0;
  while (B <= S.size()) {
    size_t E = S.find('\n', B);
    if (E == std::string_view::npos)
      E = S.size();
    Out.emplace_back(S.substr(B, E - B));
    B = E + 1;
  }
  return Out;
}

/// The contents of the fenced code blocks of a reply, in order.
std::vector<std::string> fencedBlocks(std::string_view Reply) {
  std::vector<std::string> Blocks;
  std::optional<std::string> Open;
  for (const std::string &L : lines(Reply)) {
    bool Fence = trim(L).starts_with("```");
    if (Fence && Open) {
      Blocks.push_back(std::move(*Open));
      Open.reset();
    } else if (Fence) {
      Open = std::string();
    } else if (Open) {
      *Open += L + "\n";
    }
  }
  return Blocks;
}

/// Finds Search in Text: exactly, else line by line ignoring indentation and
/// trailing spaces. Returns [begin, end) in Text.
std::optional<std::pair<size_t, size_t>> locate(const std::string &Text,
                                                const std::string &Search) {
  if (size_t P = Text.find(Search); P != std::string::npos)
    return std::make_pair(P, P + Search.size());
  std::vector<std::string> Want = lines(Search);
  while (!Want.empty() && trim(Want.back()).empty())
    Want.pop_back();
  if (Want.empty())
    return std::nullopt;
  std::vector<size_t> Starts{0};
  for (size_t I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      Starts.push_back(I + 1);
  std::vector<std::string> Have = lines(Text);
  for (size_t I = 0; I + Want.size() <= Have.size(); ++I) {
    bool Match = true;
    for (size_t J = 0; J < Want.size() && Match; ++J)
      Match = trim(Have[I + J]) == trim(Want[J]);
    if (Match) {
      size_t End = I + Want.size() < Starts.size() ? Starts[I + Want.size()]
                                                   : Text.size();
      return std::make_pair(Starts[I], End);
    }
  }
  return std::nullopt;
}

/// Applies the SEARCH/REPLACE blocks of a reply to the parent's text.
Expected<std::string> applyDiff(std::string_view Reply,
                                const std::string &Parent) {
  enum { Outside, InSearch, InReplace } State = Outside;
  std::string Text = Parent, Search, Replace;
  unsigned Block = 0;
  for (const std::string &L : lines(Reply)) {
    std::string T = trim(L);
    if (State == Outside && T.starts_with("<<<<<<<") &&
        T.find("SEARCH") != std::string::npos) {
      State = InSearch;
      ++Block;
      Search.clear();
      Replace.clear();
    } else if (State == InSearch && T.starts_with("=======")) {
      State = InReplace;
    } else if (State == InReplace && T.starts_with(">>>>>>>")) {
      auto Where = locate(Text, Search);
      if (!Where)
        return makeError("SEARCH/REPLACE block ", Block,
                         " does not match the parent's text");
      Text.replace(Where->first, Where->second - Where->first, Replace);
      State = Outside;
    } else if (State == InSearch) {
      Search += L + "\n";
    } else if (State == InReplace) {
      Replace += L + "\n";
    }
  }
  if (State != Outside)
    return makeError("SEARCH/REPLACE block ", Block, " is not closed");
  return Text;
}

const std::vector<std::string> &forbiddenCalls() {
  static const std::vector<std::string> Names = {
      "system",  "popen",   "fork",   "vfork",  "execl",       "execlp",
      "execle",  "execv",   "execvp", "execve", "posix_spawn", "fopen",
      "freopen", "open",    "openat", "creat",  "socket",      "connect",
      "dlopen",  "syscall", "ptrace", "kill",   "remove",      "unlink",
      "rename",  "mkdir",   "rmdir",  "chdir",  "setenv",      "putenv",
      "exit",    "_exit",   "abort",  "atexit", "signal"};
  return Names;
}

/// Whether Blank calls Name (an identifier followed by '(').
bool calls(std::string_view Blank, std::string_view Name) {
  for (size_t P = Blank.find(Name); P != std::string_view::npos;
       P = Blank.find(Name, P + 1)) {
    size_t End = P + Name.size();
    if ((P > 0 && isIdentChar(Blank[P - 1])) ||
        (End < Blank.size() && isIdentChar(Blank[End])))
      continue;
    size_t Next = skipSpace(Blank, End);
    if (Next < Blank.size() && Blank[Next] == '(')
      return true;
  }
  return false;
}

bool mentions(std::string_view Blank, std::string_view Word) {
  for (size_t P = Blank.find(Word); P != std::string_view::npos;
       P = Blank.find(Word, P + 1)) {
    size_t End = P + Word.size();
    if ((P == 0 || !isIdentChar(Blank[P - 1])) &&
        (End >= Blank.size() || !isIdentChar(Blank[End])))
      return true;
  }
  return false;
}

Error checkHostCode(std::string_view Source, const ReplyRules &R) {
  std::string Blank = blanked(Source);
  for (const Definition &D : definitions(Blank)) {
    if (D.Name == "main")
      return makeError("the reply defines main(), which is host code");
    std::string_view Head(Blank.data() + D.Begin, D.ParamsEnd - D.Begin);
    if (R.Language == KernelLanguage::Cuda &&
        Head.find("__global__") == std::string_view::npos &&
        Head.find("__device__") == std::string_view::npos)
      return makeError("the reply defines '", D.Name,
                       "', which is host code (only __global__ and "
                       "__device__ functions are allowed)");
  }
  for (const std::string &Name : forbiddenCalls())
    if (calls(Blank, Name))
      return makeError("the reply calls ", Name,
                       "(), which is host code (no process, file or "
                       "environment calls in a kernel)");
  if (Blank.find("constructor") != std::string::npos ||
      Blank.find("destructor") != std::string::npos)
    if (mentions(Blank, "__attribute__"))
      return makeError("the reply adds code that runs when the kernel is "
                       "loaded (a constructor or destructor attribute)");
  if (R.Language == KernelLanguage::Host &&
      (mentions(Blank, "asm") || mentions(Blank, "__asm__") ||
       mentions(Blank, "__asm")))
    return makeError("the reply uses inline assembly, which the host backend "
                     "does not accept");
  return Error::success();
}

/// Whether a quoted include names a file inside one of the folders.
bool insideIncludeDirs(const std::string &Line, const ReplyRules &R) {
  if (Line.size() < 3 || Line.front() != '"' || Line.back() != '"')
    return false;
  fs::path Name(Line.substr(1, Line.size() - 2));
  if (Name.is_absolute())
    return false;
  for (const fs::path &Part : Name)
    if (Part == "..")
      return false;
  std::error_code EC;
  for (const std::string &Dir : R.IncludeDirs)
    if (fs::is_regular_file(fs::path(Dir) / Name, EC))
      return true;
  return false;
}

Error checkIncludes(std::string_view Source, const ReplyRules &R) {
  for (const std::string &Line : includeLines(Source))
    if (std::find(R.Includes.begin(), R.Includes.end(), Line) ==
            R.Includes.end() &&
        !insideIncludeDirs(Line, R))
      return makeError("the reply includes ", Line,
                       ", which the original does not include and which is "
                       "not inside the kernel's include folders");
  return Error::success();
}

/// Whether a block of code defines the kernel.
bool definesKernel(std::string_view Code, std::string_view Name) {
  std::vector<Definition> Ds = definitions(blanked(Code));
  return std::any_of(Ds.begin(), Ds.end(),
                     [&](const Definition &D) { return D.Name == Name; });
}

Expected<ParsedReply> extract(std::string_view Reply, const ReplyRules &R) {
  ParsedReply P;
  if (Reply.find("<<<<<<<") != std::string_view::npos &&
      Reply.find("SEARCH") != std::string_view::npos) {
    P.Kind = ParsedReply::Form::Diff;
    R3_TRY(moveInto(applyDiff(Reply, R.Parent), P.Source));
    return P;
  }
  std::vector<std::string> Blocks = fencedBlocks(Reply);
  if (Blocks.empty())
    return makeError("the reply contains no code (neither a fenced code "
                     "block nor SEARCH/REPLACE blocks)");
  // The last block that defines the kernel: models often show fragments
  // first and the whole source at the end.
  for (auto I = Blocks.rbegin(); I != Blocks.rend(); ++I)
    if (definesKernel(*I, R.Kernel)) {
      P.Source = std::move(*I);
      return P;
    }
  return makeError("the reply's code does not define the kernel '", R.Kernel,
                   "'");
}
} // namespace

std::string kernelBaseName(std::string_view Name) {
  std::string N(Name);
  if (std::string D = demangle(N); !D.empty())
    N = D;
  N = N.substr(0, N.find('('));
  if (size_t Colons = N.rfind("::"); Colons != std::string::npos)
    N = N.substr(Colons + 2);
  if (size_t Lt = N.find('<'); Lt != std::string::npos)
    N = N.substr(0, Lt);
  if (size_t Space = N.rfind(' '); Space != std::string::npos)
    N = N.substr(Space + 1);
  return N;
}

Expected<std::string> kernelSignature(std::string_view Source,
                                      std::string_view Name) {
  std::string Blank = blanked(Source);
  std::optional<Definition> Found;
  for (const Definition &D : definitions(Blank)) {
    if (D.Name != Name)
      continue;
    if (Found)
      return makeError("the source defines '", Name, "' more than once");
    Found = D;
  }
  if (!Found)
    return makeError("the source does not define '", Name, "'");
  return normalised(std::string_view(Blank).substr(
      Found->Begin, Found->ParamsEnd + 1 - Found->Begin));
}

std::vector<std::string> includeLines(std::string_view Source) {
  std::vector<std::string> Out;
  for (const std::string &L : lines(Source)) {
    std::string T = trim(L);
    if (!T.starts_with("#"))
      continue;
    T = trim(std::string_view(T).substr(1));
    if (!T.starts_with("include"))
      continue;
    T = trim(std::string_view(T).substr(7));
    if (size_t End = T.find_first_of(T.front() == '<' ? ">" : "\"", 1);
        !T.empty() && End != std::string::npos)
      Out.push_back(T.substr(0, End + 1));
    else
      Out.push_back(T);
  }
  return Out;
}

Expected<ParsedReply> parseReply(std::string_view Reply, const ReplyRules &R) {
  ParsedReply P;
  R3_TRY(moveInto(extract(Reply, R), P));
  if (P.Source.size() > R.MaxBytes)
    return makeError("the reply's source is ", P.Source.size(),
                     " bytes, more than the ", R.MaxBytes, " allowed");
  if (trim(P.Source) == trim(R.Parent))
    return makeError("the reply repeats the parent's source unchanged");
  std::string Want, Got;
  R3_TRY(moveInto(kernelSignature(R.Parent, R.Kernel), Want));
  Expected<std::string> G = kernelSignature(P.Source, R.Kernel);
  if (!G)
    return makeError("the reply's source: ", G.error().message());
  Got = *G;
  if (comparable(Want) != comparable(Got))
    return makeError("the reply changes the kernel's signature from '", Want,
                     "' to '", Got, "'");
  R3_TRY(checkHostCode(P.Source, R));
  R3_TRY(checkIncludes(P.Source, R));
  return P;
}

} // namespace r3::llm
