// The kernel alone (KernelAlone.h).
#include "compile/KernelAlone.h"

#include "support/StringUtil.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace r3 {

namespace {

bool identChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
}

bool identStart(char C) {
  return std::isalpha(static_cast<unsigned char>(C)) || C == '_';
}

/// The identifiers of B[Begin, End), except those at the positions in Skip.
void identifiers(const std::string &B, size_t Begin, size_t End,
                 std::set<std::string> &Out,
                 const std::set<size_t> &Skip = {}) {
  for (size_t I = Begin; I < End;) {
    if (identStart(B[I]) && (I == 0 || !identChar(B[I - 1]))) {
      size_t J = I;
      while (J < End && identChar(B[J]))
        ++J;
      if (!Skip.count(I))
        Out.insert(B.substr(I, J - I));
      I = J;
    } else {
      ++I;
    }
  }
}

/// The index of the brace that closes the one at Open; npos if none.
size_t matching(const std::string &B, size_t Open) {
  int Depth = 0;
  for (size_t I = Open; I < B.size(); ++I) {
    Depth += B[I] == '{' ? 1 : B[I] == '}' ? -1 : 0;
    if (Depth == 0)
      return I;
  }
  return std::string::npos;
}

/// Where the identifier that ends just before Pos (spaces skipped) starts;
/// npos when there is none.
size_t identBefore(const std::string &H, size_t Pos) {
  size_t E = Pos;
  while (E > 0 && std::isspace(static_cast<unsigned char>(H[E - 1])))
    --E;
  size_t S = E;
  while (S > 0 && identChar(H[S - 1]))
    --S;
  return S < E && identStart(H[S]) ? S : std::string::npos;
}

/// The start of the name of the function whose parameter list is the last
/// parenthesis group of H; npos when H is not a function's header.
size_t nameIn(const std::string &H) {
  int Depth = 0;
  for (char C : H) {
    if (C == '(')
      ++Depth;
    else if (C == ')')
      --Depth;
    else if (C == '=' && Depth == 0)
      return std::string::npos; // an initializer or a lambda
  }
  size_t Close = H.rfind(')');
  if (Close == std::string::npos)
    return std::string::npos;
  Depth = 0;
  size_t Open = Close + 1;
  while (Open-- > 0) {
    Depth += H[Open] == ')' ? 1 : H[Open] == '(' ? -1 : 0;
    if (Depth == 0)
      break;
  }
  if (Open == std::string::npos || Open > Close)
    return std::string::npos;
  size_t S = identBefore(H, Open);
  if (S == std::string::npos)
    return S;
  static const std::set<std::string> NotNames = {
      "if",     "for",      "while",         "switch",            "return",
      "sizeof", "decltype", "__attribute__", "__launch_bounds__", "alignas",
      "catch",  "defined"};
  size_t E = S;
  while (E < H.size() && identChar(H[E]))
    ++E;
  return NotNames.count(H.substr(S, E - S)) ? std::string::npos : S;
}

bool startsWithWord(const std::string &H, const char *Word) {
  size_t N = std::char_traits<char>::length(Word);
  return H.compare(0, N, Word) == 0 && (H.size() == N || !identChar(H[N]));
}

bool atLineStart(const std::string &B, size_t I) {
  while (I > 0 && (B[I - 1] == ' ' || B[I - 1] == '\t'))
    --I;
  return I == 0 || B[I - 1] == '\n';
}

/// The top-level statements outside function definitions, as the
/// positions of prototype names to leave out of the roots: in "void
/// other(int);" the name is a declaration, not a use.
std::set<size_t> prototypeNames(const std::string &B, size_t Begin,
                                size_t End) {
  std::set<size_t> Out;
  size_t Start = Begin;
  int Braces = 0;
  for (size_t I = Begin; I < End; ++I) {
    if (B[I] == '#' && atLineStart(B, I)) {
      while (I < End && !(B[I] == '\n' && B[I - 1] != '\\'))
        ++I;
      Start = I + 1;
      continue;
    }
    Braces += B[I] == '{' ? 1 : B[I] == '}' ? -1 : 0;
    if (B[I] == ';' && Braces == 0) {
      std::string H = B.substr(Start, I - Start);
      size_t N = nameIn(H);
      if (N != std::string::npos && H.find('{') == std::string::npos)
        Out.insert(Start + N);
      Start = I + 1;
    } else if (B[I] == '{' || B[I] == '}') {
      Start = I + 1;
    }
  }
  return Out;
}

} // namespace

std::vector<TopFunction> topLevelFunctions(const std::string &Text) {
  std::string B = blankedCode(Text);
  std::vector<TopFunction> Out;
  size_t StmtStart = 0;
  for (size_t I = 0; I < B.size();) {
    char C = B[I];
    if (C == '#' && atLineStart(B, I)) {
      while (I < B.size() && !(B[I] == '\n' && (I == 0 || B[I - 1] != '\\')))
        ++I;
      StmtStart = ++I;
      continue;
    }
    if (C == ';' || C == '}') { // a statement's end, or a namespace's
      StmtStart = ++I;
      continue;
    }
    if (C != '{') {
      ++I;
      continue;
    }
    std::string H = trim(B.substr(StmtStart, I - StmtStart));
    if (startsWithWord(H, "namespace") ||
        (startsWithWord(H, "extern") && H.find('"') != std::string::npos &&
         H.find('(') == std::string::npos)) {
      StmtStart = ++I; // its body is top level too
      continue;
    }
    size_t Close = matching(B, I);
    if (Close == std::string::npos)
      break;
    size_t N = startsWithWord(H, "struct") || startsWithWord(H, "class") ||
                       startsWithWord(H, "union") || startsWithWord(H, "enum")
                   ? std::string::npos
                   : nameIn(H);
    if (N == std::string::npos) { // a type, an initializer: part of a
      I = Close + 1;              // statement that ends at its ';'
      continue;
    }
    size_t E = N;
    while (E < H.size() && identChar(H[E]))
      ++E;
    size_t End = Close + 1, J = End;
    while (J < B.size() && (B[J] == ' ' || B[J] == '\t' || B[J] == '\r'))
      ++J;
    if (J < B.size() && B[J] == ';')
      End = ++J;
    while (J < B.size() && (B[J] == ' ' || B[J] == '\t' || B[J] == '\r'))
      ++J;
    if (J < B.size() && B[J] == '\n')
      End = J + 1;
    Out.push_back({H.substr(N, E - N), StmtStart, End});
    I = StmtStart = End;
  }
  return Out;
}

KernelAlone kernelAlone(const std::string &Text, const std::string &Kernel) {
  std::vector<TopFunction> Fs = topLevelFunctions(Text);
  std::string B = blankedCode(Text);
  KernelAlone A;
  std::vector<bool> Keep(Fs.size(), false);
  std::set<std::string> Names;
  // The roots: what is not a function definition (types, variables,
  // macros; a prototype's own name aside), and the kernel.
  size_t Pos = 0;
  for (const TopFunction &F : Fs) {
    identifiers(B, Pos, F.Begin, Names, prototypeNames(B, Pos, F.Begin));
    Pos = F.End;
  }
  identifiers(B, Pos, B.size(), Names, prototypeNames(B, Pos, B.size()));
  for (size_t I = 0; I < Fs.size(); ++I)
    if (Fs[I].Name == Kernel) {
      Keep[I] = A.Found = true;
      identifiers(B, Fs[I].Begin, Fs[I].End, Names);
    }
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (size_t I = 0; I < Fs.size(); ++I)
      if (!Keep[I] && Names.count(Fs[I].Name)) {
        Keep[I] = Changed = true;
        identifiers(B, Fs[I].Begin, Fs[I].End, Names);
      }
  }
  Pos = 0;
  for (size_t I = 0; I < Fs.size(); ++I) {
    if (Keep[I]) {
      if (Fs[I].Name != Kernel)
        A.Kept.push_back(Fs[I].Name);
      continue;
    }
    // A dropped function leaves its newlines, so that lines keep their
    // numbers (compile errors and the rewrite knobs' names match the file).
    A.Text += Text.substr(Pos, Fs[I].Begin - Pos);
    size_t Lines = std::count(Text.begin() + Fs[I].Begin,
                              Text.begin() + Fs[I].End, '\n');
    A.Text += std::string(Lines, '\n');
    A.DroppedLines += Lines;
    A.Dropped.push_back(Fs[I].Name);
    Pos = Fs[I].End;
  }
  A.Text += Text.substr(Pos);
  return A;
}

} // namespace r3
