// String helpers: edit distance (the classic two-row dynamic programme), sizes.
#include "support/StringUtil.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace r3 {

size_t editDistance(std::string_view A, std::string_view B) {
  std::vector<size_t> Prev(B.size() + 1), Cur(B.size() + 1);
  for (size_t J = 0; J <= B.size(); ++J)
    Prev[J] = J;
  for (size_t I = 1; I <= A.size(); ++I) {
    Cur[0] = I;
    for (size_t J = 1; J <= B.size(); ++J) {
      size_t Subst = Prev[J - 1] + (A[I - 1] == B[J - 1] ? 0 : 1);
      Cur[J] = std::min({Prev[J] + 1, Cur[J - 1] + 1, Subst});
    }
    std::swap(Prev, Cur);
  }
  return Prev[B.size()];
}

std::optional<std::string>
closestMatch(std::string_view Word,
             const std::vector<std::string> &Candidates) {
  size_t Limit = std::max<size_t>(1, (Word.size() + 2) / 3);
  std::optional<std::string> Best;
  size_t BestDistance = Limit + 1;
  for (const std::string &C : Candidates) {
    size_t D = editDistance(Word, C);
    if (D < BestDistance) {
      BestDistance = D;
      Best = C;
    }
  }
  return Best;
}

std::string formatBytes(uint64_t Bytes) {
  static const char *Units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (Bytes < 1024)
    return std::to_string(Bytes) + " B";
  double Value = static_cast<double>(Bytes);
  size_t Unit = 0;
  while (Value >= 1024 && Unit + 1 < std::size(Units)) {
    Value /= 1024;
    ++Unit;
  }
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f %s", Value, Units[Unit]);
  return Buf;
}

std::string join(const std::vector<std::string> &Parts, std::string_view Sep) {
  std::string Out;
  for (size_t I = 0; I < Parts.size(); ++I) {
    if (I)
      Out += Sep;
    Out += Parts[I];
  }
  return Out;
}

std::vector<std::string> split(std::string_view Text, char Sep) {
  std::vector<std::string> Out;
  size_t Start = 0;
  while (true) {
    size_t End = Text.find(Sep, Start);
    Out.emplace_back(Text.substr(Start, End - Start));
    if (End == std::string_view::npos)
      return Out;
    Start = End + 1;
  }
}

std::optional<uint64_t> parseUnsigned(std::string_view Text) {
  uint64_t Value = 0;
  auto [End, Ec] =
      std::from_chars(Text.data(), Text.data() + Text.size(), Value);
  if (Text.empty() || Ec != std::errc() || End != Text.data() + Text.size())
    return std::nullopt;
  return Value;
}

std::string formatShare(double Share) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f%%", Share * 100);
  return Buf;
}

std::string formatFactor(double Factor, int Decimals) {
  if (!std::isfinite(Factor))
    return "unbounded";
  char Buf[48];
  std::snprintf(Buf, sizeof(Buf), "%.*fx", Decimals, Factor);
  return Buf;
}

std::string quoteShort(std::string_view Text) {
  constexpr size_t Keep = 24;
  if (Text.size() <= Keep)
    return "'" + std::string(Text) + "'";
  return "'" + std::string(Text.substr(0, Keep)) + "...' (" +
         std::to_string(Text.size()) + " characters)";
}

Expected<int64_t> parseInteger(std::string_view Text, int64_t Min,
                               int64_t Max) {
  auto Range = [&] {
    return makeError("expected an integer from ", Min, " to ", Max, ", got ",
                     quoteShort(Text));
  };
  std::string_view Digits = Text;
  if (!Digits.empty() && Digits[0] == '-')
    Digits.remove_prefix(1);
  if (Digits.empty() ||
      Digits.find_first_not_of("0123456789") != std::string_view::npos)
    return makeError("expected an integer, got ", quoteShort(Text));
  int64_t Value = 0;
  auto [End, Ec] =
      std::from_chars(Text.data(), Text.data() + Text.size(), Value);
  if (Ec != std::errc() || End != Text.data() + Text.size() || Value < Min ||
      Value > Max)
    return Range();
  return Value;
}

Expected<double> parseDouble(std::string_view Text) {
  // from_chars accepts neither a leading '+' nor white space, and reads
  // "inf", "nan" and "0x1p3" only when asked to: refuse them up front.
  size_t Letters = Text.find_first_not_of("0123456789.-eE+");
  double Value = 0;
  auto [End, Ec] =
      std::from_chars(Text.data(), Text.data() + Text.size(), Value);
  if (Text.empty() || Letters != std::string_view::npos ||
      End != Text.data() + Text.size() ||
      (Ec != std::errc() && Ec != std::errc::result_out_of_range))
    return makeError("expected a number, got ", quoteShort(Text));
  if (Ec == std::errc::result_out_of_range) {
    // from_chars leaves Value alone on both overflow and underflow; strtod
    // tells them apart (HUGE_VAL, or the nearest small value).
    Value = std::strtod(std::string(Text).c_str(), nullptr);
    if (std::isinf(Value))
      return makeError("number out of range, got ", quoteShort(Text),
                       " (a double holds magnitudes up to 1.8e308)");
  }
  return Value;
}

std::optional<uint64_t> parseSize(std::string_view Text) {
  uint64_t Unit = 1;
  if (!Text.empty()) {
    char Last = static_cast<char>(std::toupper(Text.back()));
    int Shift = Last == 'K' ? 10 : Last == 'M' ? 20 : Last == 'G' ? 30 : 0;
    if (Shift) {
      Text.remove_suffix(1);
      Unit = 1ull << Shift;
    }
  }
  auto V = parseUnsigned(Text);
  if (!V || *V == 0 || *V > ~0ull / Unit)
    return std::nullopt;
  return *V * Unit;
}

std::string trim(std::string_view Text) {
  size_t B = Text.find_first_not_of(" \t\r\n");
  if (B == std::string_view::npos)
    return "";
  size_t E = Text.find_last_not_of(" \t\r\n");
  return std::string(Text.substr(B, E - B + 1));
}

/// Text with comments, string and character literals replaced by blanks
/// (newlines kept, so that line numbers stay right).
std::string blankedCode(const std::string &Text) {
  std::string Out = Text;
  enum { Code, Line, Block, Str, Chr } S = Code;
  for (size_t I = 0; I < Out.size(); ++I) {
    char C = Out[I], N = I + 1 < Out.size() ? Out[I + 1] : '\0';
    auto Blank = [&](size_t J) {
      if (Out[J] != '\n')
        Out[J] = ' ';
    };
    switch (S) {
    case Code:
      if (C == '/' && N == '/')
        S = Line, Blank(I);
      else if (C == '/' && N == '*')
        S = Block, Blank(I), Blank(++I);
      else if (C == '"')
        S = Str;
      else if (C == '\'')
        S = Chr;
      break;
    case Line:
      if (C == '\n')
        S = Code;
      else
        Blank(I);
      break;
    case Block:
      if (C == '*' && N == '/')
        S = Code, Blank(I), Blank(++I);
      else
        Blank(I);
      break;
    case Str:
    case Chr:
      if (C == '\\' && I + 1 < Out.size())
        Blank(I), Blank(++I);
      else if (C == (S == Str ? '"' : '\''))
        S = Code;
      else
        Blank(I);
      break;
    }
  }
  return Out;
}

} // namespace r3
