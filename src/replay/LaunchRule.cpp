// Grid rules for changed block sizes (LaunchRule.h): a small recursive-descent
// evaluator over doubles, exact for the integers a launch holds.
#include "replay/LaunchRule.h"

#include "support/StringUtil.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace r3 {

namespace {
class Eval {
public:
  Eval(const std::string &Text, const std::map<std::string, double> &Vars)
      : Text(Text), Vars(Vars) {}
  Expected<double> run() {
    double V = sum();
    skip();
    if (Err.empty() && Pos != Text.size())
      fail("unexpected '" + Text.substr(Pos, 1) + "'");
    if (!Err.empty())
      return makeError("'", Text, "' at column ", ErrPos + 1, ": ", Err);
    return V;
  }

private:
  void fail(const std::string &Why) {
    if (Err.empty()) {
      Err = Why;
      ErrPos = Pos;
    }
  }
  void skip() {
    while (Pos < Text.size() &&
           std::isspace(static_cast<unsigned char>(Text[Pos])))
      ++Pos;
  }
  bool eat(char C) {
    skip();
    if (Pos < Text.size() && Text[Pos] == C) {
      ++Pos;
      return true;
    }
    return false;
  }
  double sum() {
    double V = product();
    for (;;) {
      if (eat('+'))
        V += product();
      else if (eat('-'))
        V -= product();
      else
        return V;
    }
  }
  double product() {
    double V = unary();
    for (;;) {
      if (eat('*')) {
        V *= unary();
      } else if (eat('/')) {
        double D = unary();
        if (D == 0)
          fail("division by zero");
        else
          V /= D;
      } else if (eat('%')) {
        double D = unary();
        if (D == 0)
          fail("division by zero");
        else
          V = std::fmod(V, D);
      } else {
        return V;
      }
    }
  }
  double unary() {
    if (eat('-'))
      return -unary();
    return primary();
  }
  double call(const std::string &F) {
    double A = sum();
    if (F == "ceil" || F == "floor") {
      if (!eat(')'))
        fail("expected ')'");
      return F == "ceil" ? std::ceil(A) : std::floor(A);
    }
    if (!eat(','))
      fail("expected ',': " + F + " takes two arguments");
    double B = sum();
    if (!eat(')'))
      fail("expected ')'");
    return F == "min" ? std::min(A, B) : std::max(A, B);
  }
  double primary() {
    skip();
    if (eat('(')) {
      double V = sum();
      if (!eat(')'))
        fail("expected ')'");
      return V;
    }
    size_t Start = Pos;
    if (Pos < Text.size() &&
        std::isdigit(static_cast<unsigned char>(Text[Pos]))) {
      while (Pos < Text.size() &&
             std::isdigit(static_cast<unsigned char>(Text[Pos])))
        ++Pos;
      auto V = parseDouble(std::string_view(Text).substr(Start, Pos - Start));
      if (!V) {
        std::swap(Pos, Start); // the column of the number, not of its end
        fail(V.error().message());
        std::swap(Pos, Start);
        return 0;
      }
      return *V;
    }
    while (Pos < Text.size() &&
           (std::isalnum(static_cast<unsigned char>(Text[Pos])) ||
            Text[Pos] == '_'))
      ++Pos;
    std::string Name = Text.substr(Start, Pos - Start);
    if (Name.empty()) {
      fail(Pos < Text.size() ? "unexpected '" + Text.substr(Pos, 1) + "'"
                             : "expected a value");
      return 0;
    }
    if (Name == "ceil" || Name == "floor" || Name == "min" || Name == "max") {
      if (!eat('(')) {
        fail("expected '(' after " + Name);
        return 0;
      }
      return call(Name);
    }
    auto It = Vars.find(Name);
    if (It != Vars.end())
      return It->second;
    Pos = Start;
    std::vector<std::string> Known;
    for (const auto &[K, V] : Vars)
      Known.push_back(K);
    std::string Hint;
    if (auto Best = closestMatch(Name, Known))
      Hint = "; did you mean '" + *Best + "'?";
    fail("unknown name '" + Name + "'" + Hint);
    return 0;
  }

  const std::string &Text;
  const std::map<std::string, double> &Vars;
  size_t Pos = 0, ErrPos = 0;
  std::string Err;
};

const char *const Axes[] = {"x", "y", "z"};

std::string formatNumber(double X) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.6g", X);
  return Buf;
}

std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t");
  size_t E = S.find_last_not_of(" \t");
  return B == std::string::npos ? std::string() : S.substr(B, E - B + 1);
}
} // namespace

std::string coarsenedGridRule(unsigned Per) {
  return "x=ceil(rec_grid_x * rec_block_x / (block_x * " + std::to_string(Per) +
         "));y=ceil(rec_grid_y * rec_block_y / block_y);"
         "z=ceil(rec_grid_z * rec_block_z / block_z)";
}

std::string gridRuleFor(const std::string &Rule, unsigned Per, bool GridSet) {
  bool KeepThreads = Rule.empty() || Rule == "keep-threads";
  return Per > 1 && !GridSet && KeepThreads ? coarsenedGridRule(Per) : Rule;
}

Expected<GridRule> parseGridRule(const std::string &Text) {
  GridRule R;
  R.Text = Text;
  if (Text == "keep-threads")
    return R;
  if (Text == "keep-grid") {
    R.Mode = GridRule::KeepGrid;
    return R;
  }
  R.Mode = GridRule::Expressions;
  R.Exprs.resize(3);
  for (const std::string &Part : split(Text, ';')) {
    size_t Eq = Part.find('=');
    std::string Axis = trim(Part.substr(0, Eq == std::string::npos ? 0 : Eq));
    int D = Axis == "x" || Axis == "grid_x"   ? 0
            : Axis == "y" || Axis == "grid_y" ? 1
            : Axis == "z" || Axis == "grid_z" ? 2
                                              : -1;
    if (Eq == std::string::npos || D < 0)
      return makeError("grid rule '", Text,
                       "': expected keep-threads, "
                       "keep-grid or assignments such as 'x=ceil(arg2 / "
                       "block_x)' separated by ';', got '",
                       Part, "'");
    if (!R.Exprs[D].empty())
      return makeError("grid rule '", Text, "': grid ", Axes[D],
                       " is assigned twice");
    R.Exprs[D] = trim(Part.substr(Eq + 1));
    if (R.Exprs[D].empty())
      return makeError("grid rule '", Text, "': grid ", Axes[D],
                       " has no expression");
  }
  return R;
}

std::map<std::string, double>
paramValues(const LaunchInfo &L, const KernelInfo &K,
            const std::vector<std::string> &Names) {
  std::map<std::string, double> Out;
  for (size_t I = 0; I < K.Params.size(); ++I) {
    const ParamInfo &P = K.Params[I];
    if (P.Offset + P.Size > L.Params.size())
      continue;
    const uint8_t *B = L.Params.data() + P.Offset;
    double V;
    if (P.Size == 1) {
      int8_t X;
      std::memcpy(&X, B, 1);
      V = X;
    } else if (P.Size == 2) {
      int16_t X;
      std::memcpy(&X, B, 2);
      V = X;
    } else if (P.Size == 4) {
      int32_t X;
      std::memcpy(&X, B, 4);
      V = X;
    } else if (P.Size == 8) {
      int64_t X;
      std::memcpy(&X, B, 8);
      V = static_cast<double>(X);
    } else {
      continue;
    }
    Out["arg" + std::to_string(I)] = V;
    if (I < Names.size() && !Names[I].empty())
      Out.emplace(Names[I], V);
  }
  return Out;
}

Expected<Dim3> applyGridRule(const GridRule &Rule, const LaunchValues &V) {
  Dim3 G = V.RecordedGrid;
  if (Rule.Mode == GridRule::KeepGrid)
    return G;
  if (Rule.Mode == GridRule::KeepThreads) {
    for (int D = 0; D < 3; ++D) {
      uint64_t Threads = uint64_t(V.RecordedGrid[D]) * V.RecordedBlock[D];
      G[D] = static_cast<uint32_t>((Threads + V.Block[D] - 1) / V.Block[D]);
    }
    return G;
  }
  std::map<std::string, double> Vars = V.Params;
  for (int D = 0; D < 3; ++D) {
    Vars[std::string("block_") + Axes[D]] = V.Block[D];
    Vars[std::string("rec_block_") + Axes[D]] = V.RecordedBlock[D];
    Vars[std::string("rec_grid_") + Axes[D]] = V.RecordedGrid[D];
  }
  for (int D = 0; D < 3; ++D) {
    if (Rule.Exprs[D].empty())
      continue;
    double X;
    R3_TRY(moveInto(Eval(Rule.Exprs[D], Vars).run(), X));
    double Max = D == 0 ? 2147483647.0 : 65535.0;
    if (!(X >= 1 && X <= Max) || X != std::floor(X))
      return makeError(
          "grid rule: grid ", Axes[D], " = ", Rule.Exprs[D], " gives ",
          formatNumber(X), "; expected an integer from 1 to ",
          static_cast<uint64_t>(Max), " (round up with ceil(...))");
    G[D] = static_cast<uint32_t>(X);
  }
  return G;
}

Expected<Dim3> parseDim3(const std::string &Text, const std::string &What) {
  std::vector<std::string> Parts = split(Text, ',');
  Dim3 D = {1, 1, 1};
  if (Parts.empty() || Parts.size() > 3)
    return makeError(What, " expects X[,Y,Z], got '", Text, "'");
  for (size_t I = 0; I < Parts.size(); ++I) {
    auto N = parseUnsigned(trim(Parts[I]));
    if (!N || *N == 0 || *N > 2147483647)
      return makeError(What, " expects positive integers X[,Y,Z], got '", Text,
                       "'");
    D[I] = static_cast<uint32_t>(*N);
  }
  return D;
}

} // namespace r3
