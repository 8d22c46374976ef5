// Automatic source transformations (Rewrite.h).
#include "compile/Rewrite.h"

#include "support/FileUtil.h"
#include "support/Process.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

namespace r3 {

namespace {

using ojson = nlohmann::ordered_json;

/// A node of the dumped AST with its locations resolved to offsets.
struct Node {
  const ojson *J = nullptr;
  std::string Kind;
  const Node *Parent = nullptr;
  std::optional<size_t> Begin, End, Loc;
  bool BeginPlain = false; ///< not from a macro expansion, in the file
  bool EndPlain = false;
  bool LocPlain = false;
  size_t EndTokLen = 0; ///< the length of the range's last token
  std::vector<Node> Kids;
};

/// clang's JSON dumper writes a location's file only where it changes from
/// the last location written: the walk follows the dump's order to know
/// which file each offset is in.
class Reader {
public:
  explicit Reader(std::string File) : Main(std::move(File)) {}

  void read(const ojson &J, Node &N, const Node *Parent) {
    N.J = &J;
    N.Parent = Parent;
    N.Kind = J.value("kind", "");
    for (auto It = J.begin(); It != J.end(); ++It) {
      if (It.key() == "loc" && It->is_object()) {
        auto [Off, Plain] = location(*It);
        N.Loc = Off;
        N.LocPlain = Plain;
      } else if (It.key() == "range" && It->is_object()) {
        if (It->contains("begin")) {
          auto [Off, Plain] = location((*It)["begin"]);
          N.Begin = Off;
          N.BeginPlain = Plain;
        }
        if (It->contains("end")) {
          const ojson &E = (*It)["end"];
          std::tie(N.End, N.EndPlain) = location(E);
          if (E.contains("tokLen") && E["tokLen"].is_number_unsigned())
            N.EndTokLen = E["tokLen"].get<size_t>();
        }
      } else if (It.key() == "inner" && It->is_array()) {
        N.Kids.reserve(It->size());
        for (const ojson &K : *It) {
          if (!K.is_object() || !K.contains("kind"))
            continue; // a null child (a for without its init)
          N.Kids.emplace_back();
          read(K, N.Kids.back(), &N);
        }
      }
    }
  }

private:
  /// The offset of a location (the expansion's, for a macro's) and whether
  /// it is plain text of the main file.
  std::pair<std::optional<size_t>, bool> location(const ojson &L) {
    if (L.contains("spellingLoc") || L.contains("expansionLoc")) {
      if (L.contains("spellingLoc"))
        bare(L["spellingLoc"]);
      std::optional<size_t> Off;
      bool InMain = false;
      if (L.contains("expansionLoc"))
        std::tie(Off, InMain) = bare(L["expansionLoc"]);
      return {InMain ? Off : std::nullopt, false};
    }
    auto [Off, InMain] = bare(L);
    return {InMain ? Off : std::nullopt, InMain && Off.has_value()};
  }

  std::pair<std::optional<size_t>, bool> bare(const ojson &L) {
    if (L.contains("file") && L["file"].is_string())
      Current = L["file"].get<std::string>();
    std::optional<size_t> Off;
    if (L.contains("offset") && L["offset"].is_number_unsigned())
      Off = L["offset"].get<size_t>();
    return {Off, Current == Main};
  }

  std::string Main;
  std::string Current;
};

bool isLoop(const std::string &K) {
  return K == "ForStmt" || K == "WhileStmt" || K == "DoStmt" ||
         K == "CXXForRangeStmt";
}

template <typename F> void visit(const Node &N, F &&Fn) {
  Fn(N);
  for (const Node &K : N.Kids)
    visit(K, Fn);
}

/// The node under casts and parentheses.
const Node *bareExpr(const Node *N) {
  while (N &&
         (N->Kind == "ImplicitCastExpr" || N->Kind == "ParenExpr" ||
          N->Kind == "ConstantExpr") &&
         !N->Kids.empty())
    N = &N->Kids.front();
  return N;
}

/// The parent above casts and parentheses.
const Node *parentExpr(const Node *N, const Node **Child) {
  const Node *P = N->Parent;
  *Child = N;
  while (P && (P->Kind == "ParenExpr" ||
               (P->Kind == "ImplicitCastExpr" &&
                P->J->value("castKind", "") != "LValueToRValue"))) {
    *Child = P;
    P = P->Parent;
  }
  return P;
}

bool isRvalueRead(const Node *N) {
  return N && N->Kind == "ImplicitCastExpr" &&
         N->J->value("castKind", "") == "LValueToRValue";
}

/// Whether a use of a pointer parameter (its DeclRefExpr) only reads what
/// it points to: p[i] or *p (through member accesses) read as values.
bool onlyReads(const Node &Ref) {
  const Node *Child = nullptr;
  const Node *P = parentExpr(&Ref, &Child);
  if (!isRvalueRead(P)) // the pointer's own value, not assigned to
    return false;
  const Node *Use = parentExpr(P, &Child);
  if (!Use)
    return false;
  if (Use->Kind == "ArraySubscriptExpr") {
    if (Use->Kids.empty() || &Use->Kids.front() != Child)
      return false; // the pointer is the index (i[p])
  } else if (Use->Kind == "UnaryOperator") {
    if (Use->J->value("opcode", "") != "*")
      return false;
  } else {
    return false; // arithmetic, a call, a copy: it may be written elsewhere
  }
  const Node *Up = parentExpr(Use, &Child);
  while (Up && Up->Kind == "MemberExpr" && !Up->J->value("isArrow", false))
    Up = parentExpr(Up, &Child);
  return isRvalueRead(Up);
}

/// A constant trip count: for (int i = C0; i < C1; ...) with integer
/// literals (or macros that are).
bool constantTrips(const Node &Loop) {
  if (Loop.Kind != "ForStmt" || Loop.Kids.size() < 3)
    return false;
  const Node &Init = Loop.Kids[0];
  if (Init.Kind != "DeclStmt" || Init.Kids.size() != 1 ||
      Init.Kids[0].Kind != "VarDecl" || Init.Kids[0].Kids.empty())
    return false;
  std::string Var = Init.Kids[0].J->value("id", "");
  auto literal = [](const Node *N) {
    N = bareExpr(N);
    if (N && N->Kind == "UnaryOperator" && N->J->value("opcode", "") == "-" &&
        !N->Kids.empty())
      N = bareExpr(&N->Kids.front());
    return N && N->Kind == "IntegerLiteral";
  };
  if (!literal(&Init.Kids[0].Kids.front()))
    return false;
  // The condition is the first child after the init that is an operator.
  for (size_t I = 1; I < Loop.Kids.size(); ++I) {
    const Node &C = Loop.Kids[I];
    if (C.Kind != "BinaryOperator")
      continue;
    std::string Op = C.J->value("opcode", "");
    if (Op != "<" && Op != "<=" && Op != ">" && Op != ">=" && Op != "!=")
      return false;
    if (C.Kids.size() != 2)
      return false;
    const Node *L = bareExpr(&C.Kids[0]), *R = bareExpr(&C.Kids[1]);
    auto isVar = [&](const Node *N) {
      return N && N->Kind == "DeclRefExpr" &&
             N->J->contains("referencedDecl") &&
             (*N->J)["referencedDecl"].value("id", "") == Var;
    };
    return (isVar(L) && literal(R)) || (isVar(R) && literal(L));
  }
  return false;
}

size_t lineStart(const std::string &Text, size_t Off) {
  size_t NL = Off == 0 ? std::string::npos : Text.rfind('\n', Off - 1);
  return NL == std::string::npos ? 0 : NL + 1;
}

size_t lineOf(const std::string &Text, size_t Off) {
  return 1 + std::count(Text.begin(), Text.begin() + Off, '\n');
}

std::string identifier(const std::string &S) {
  std::string Out;
  for (char C : S)
    Out += std::isalnum(static_cast<unsigned char>(C)) ? C : '_';
  return Out;
}

/// The kernel's definition among the dump's documents.
const Node *findKernel(const std::vector<Node> &Docs, const std::string &Name) {
  for (const Node &D : Docs) {
    const Node *F = &D;
    if (D.Kind == "FunctionTemplateDecl") {
      auto It = std::find_if(D.Kids.begin(), D.Kids.end(), [](const Node &K) {
        return K.Kind == "FunctionDecl";
      });
      if (It == D.Kids.end())
        continue;
      F = &*It;
    }
    if (F->Kind != "FunctionDecl" || F->J->value("name", "") != Name ||
        !F->LocPlain)
      continue;
    bool Body = std::any_of(F->Kids.begin(), F->Kids.end(), [](const Node &K) {
      return K.Kind == "CompoundStmt";
    });
    if (Body)
      return F;
  }
  return nullptr;
}

std::string restrictBlock(const std::string &K) {
  return "#ifndef R3_RW_RESTRICT // r3 rewrite: " + K +
         "'s pointer parameters\n"
         "#define R3_RW_RESTRICT 0\n"
         "#endif\n"
         "#if R3_RW_RESTRICT >= 1\n"
         "#define R3_RW_R_" +
         K +
         " __restrict__\n"
         "#else\n"
         "#define R3_RW_R_" +
         K +
         "\n"
         "#endif\n"
         "#if R3_RW_RESTRICT == 2\n"
         "#define R3_RW_C_" +
         K +
         " const\n"
         "#else\n"
         "#define R3_RW_C_" +
         K + "\n#endif // R3_RW_RESTRICT\n";
}

std::string unrollBlock(const RewriteSite &S) {
  std::string B;
  bool First = true;
  for (const std::string &V : S.Values) {
    if (V == "0")
      continue;
    B += std::string(First ? "#if " : "#elif ") + S.Knob + " == " + V + "\n";
    B += S.Indent +
         (V == "-1" ? "#pragma unroll\n" : "#pragma unroll " + V + "\n");
    First = false;
  }
  return B + "#endif\n";
}

// --- one element per thread as a grid-stride loop ---

/// The text of a node, its last token included, where both ends are plain
/// text of the file.
std::optional<std::string> spanText(const Node &N, const std::string &Text) {
  if (!N.BeginPlain || !N.EndPlain || !N.Begin || !N.End || !N.EndTokLen ||
      *N.End + N.EndTokLen > Text.size() || *N.Begin > *N.End)
    return std::nullopt;
  return Text.substr(*N.Begin, *N.End + N.EndTokLen - *N.Begin);
}

bool refersTo(const Node &N, const std::string &Id) {
  return N.Kind == "DeclRefExpr" && N.J->contains("referencedDecl") &&
         (*N.J)["referencedDecl"].value("id", "") == Id;
}

/// Whether a bound E may be evaluated again each pass: variables,
/// constants and arithmetic over them, nothing with an effect. Ids gets
/// the variables it reads.
bool plainBound(const Node &E, std::set<std::string> &Ids) {
  static const std::set<std::string> Arith = {"+", "-",  "*", "/",
                                              "%", "<<", ">>"};
  bool Ok = true;
  visit(E, [&](const Node &N) {
    if (N.Kind == "DeclRefExpr") {
      const ojson &D = N.J->value("referencedDecl", ojson::object());
      std::string K = D.value("kind", "");
      if (K != "VarDecl" && K != "ParmVarDecl")
        Ok = false;
      Ids.insert(D.value("id", ""));
    } else if (N.Kind == "BinaryOperator") {
      Ok &= Arith.count(N.J->value("opcode", "")) > 0;
    } else if (N.Kind == "UnaryOperator") {
      Ok &= N.J->value("opcode", "") == "-";
    } else if (N.Kind == "MemberExpr") {
      Ok &= !N.J->value("isArrow", false); // a field of a struct by value
    } else if (N.Kind != "IntegerLiteral" && N.Kind != "ImplicitCastExpr" &&
               N.Kind != "ParenExpr" && N.Kind != "CStyleCastExpr" &&
               N.Kind != "ConstantExpr") {
      Ok = false;
    }
  });
  return Ok;
}

/// Whether the statements Body may run as the body of a loop over the
/// elements: no barrier, warp collective, shared memory or inline
/// assembly, no way out of the loop but a `return;` of the body's own
/// level (not inside a loop or switch of it), which the loop turns into
/// `continue;` (Returns gets them), and the variables Fixed only read.
bool loopableBody(const std::vector<const Node *> &Body,
                  const std::set<std::string> &Fixed,
                  std::vector<const Node *> &Returns) {
  static const std::regex Together(
      "sync|shfl|ballot|^__any|^__all|activemask|^__match|^__reduce|"
      "barrier|this_thread_block|this_grid|tiled_partition");
  bool Ok = true;
  auto ownReturn = [&](const Node &R) {
    if (!R.Kids.empty())
      return false; // a value: not a kernel's return
    for (const Node *Up = R.Parent; Up; Up = Up->Parent) {
      if (isLoop(Up->Kind) || Up->Kind == "SwitchStmt" ||
          Up->Kind == "LambdaExpr")
        return false;
      if (std::find(Body.begin(), Body.end(), Up) != Body.end())
        return true;
    }
    return std::find(Body.begin(), Body.end(), &R) != Body.end();
  };
  for (const Node *B : Body)
    visit(*B, [&](const Node &N) {
      if (N.Kind == "ReturnStmt") {
        if (ownReturn(N))
          Returns.push_back(&N);
        else
          Ok = false;
        return;
      }
      if (N.Kind == "GotoStmt" || N.Kind == "IndirectGotoStmt" ||
          N.Kind == "LabelStmt" || N.Kind == "GCCAsmStmt" ||
          N.Kind == "MSAsmStmt" || N.Kind == "CUDASharedAttr" ||
          N.Kind == "LambdaExpr") {
        Ok = false;
        return;
      }
      if (N.Kind != "DeclRefExpr" || !N.J->contains("referencedDecl"))
        return;
      const ojson &D = (*N.J)["referencedDecl"];
      std::string Name = D.value("name", "");
      if (D.value("kind", "") == "FunctionDecl" &&
          std::regex_search(Name, Together))
        Ok = false;
      if (!Fixed.count(D.value("id", "")))
        return;
      // Read as a value, or a field of it read (in.n of a struct passed
      // by value), or the whole of it copied; anything else may write it.
      const Node *Child = nullptr;
      const Node *Up = parentExpr(&N, &Child);
      while (Up && Up->Kind == "MemberExpr" && !Up->J->value("isArrow", false))
        Up = parentExpr(Up, &Child);
      if (!isRvalueRead(Up) && !(Up && Up->Kind == "CXXConstructExpr"))
        Ok = false; // written, or its address taken
    });
  return Ok;
}

/// The offset just past the end of the line holding Off (past its
/// newline), or npos when the file ends first.
size_t pastLine(const std::string &Text, size_t Off) {
  size_t NL = Text.find('\n', Off);
  return NL == std::string::npos ? NL : NL + 1;
}

bool blank(const std::string &S) {
  return S.find_first_not_of(" \t") == std::string::npos;
}

/// The one-element-per-thread shape of kernel F, as a GridStride site:
///   [T] i = blockIdx.x * blockDim.x + threadIdx.x;   (either order)
///   if (i < E) S                                     (the kernel's end)
/// or
///   [T] i = ...;
///   if (i >= E) return;
///   rest...
/// with statements of any kind before the index. None when the kernel has
/// another shape, or where the text is not plain lines.
std::optional<RewriteSite> gridStrideSite(const Node &F,
                                          const std::string &Text) {
  auto BodyIt = std::find_if(F.Kids.begin(), F.Kids.end(), [](const Node &K) {
    return K.Kind == "CompoundStmt";
  });
  if (BodyIt == F.Kids.end())
    return std::nullopt;
  bool Shared = false;
  visit(F, [&](const Node &N) { Shared |= N.Kind == "CUDASharedAttr"; });
  if (Shared)
    return std::nullopt;
  const Node &Body = *BodyIt;
  for (size_t D = 0; D + 1 < Body.Kids.size(); ++D) {
    const Node &Decl = Body.Kids[D];
    const Node &If = Body.Kids[D + 1];
    if (Decl.Kind != "DeclStmt" || Decl.Kids.size() != 1 ||
        Decl.Kids[0].Kind != "VarDecl" || Decl.Kids[0].Kids.empty() ||
        If.Kind != "IfStmt" || If.J->value("hasElse", false) ||
        If.J->value("hasInit", false) || If.J->value("hasVar", false) ||
        If.Kids.size() != 2)
      continue;
    const Node &Var = Decl.Kids[0];
    std::string Iv = Var.J->value("name", ""), Id = Var.J->value("id", "");
    std::string Type =
        Var.J->contains("type") ? (*Var.J)["type"].value("qualType", "") : "";
    if (Type.rfind("const ", 0) == 0)
      Type = Type.substr(6);
    if (Iv.empty() || Type.empty() ||
        Type.find_first_of("*&[(") != std::string::npos ||
        Type.find("auto") != std::string::npos)
      continue;
    auto Init = spanText(Var.Kids.back(), Text);
    if (!Init)
      continue;
    std::string Flat;
    for (char C : *Init)
      if (!std::isspace(static_cast<unsigned char>(C)) && C != '(' && C != ')')
        Flat += C;
    static const std::set<std::string> Index = {
        "blockIdx.x*blockDim.x+threadIdx.x",
        "blockDim.x*blockIdx.x+threadIdx.x",
        "threadIdx.x+blockIdx.x*blockDim.x",
        "threadIdx.x+blockDim.x*blockIdx.x"};
    if (!Index.count(Flat))
      continue;
    // The condition: i < E (or E > i) guarding the rest, or i >= E (or
    // E <= i) returning.
    const Node *Cond = bareExpr(&If.Kids[0]);
    if (!Cond || Cond->Kind != "BinaryOperator" || Cond->Kids.size() != 2)
      continue;
    std::string Op = Cond->J->value("opcode", "");
    const Node *L = bareExpr(&Cond->Kids[0]), *R = bareExpr(&Cond->Kids[1]);
    const Node *Bound = nullptr;
    bool Guard = false;
    if ((Op == "<" || Op == ">=") && L && refersTo(*L, Id))
      Bound = &Cond->Kids[1], Guard = Op == "<";
    else if ((Op == ">" || Op == "<=") && R && refersTo(*R, Id))
      Bound = &Cond->Kids[0], Guard = Op == ">";
    std::set<std::string> Fixed = {Id};
    if (!Bound || !plainBound(*Bound, Fixed))
      continue;
    auto BoundText = spanText(*Bound, Text);
    auto CondText = spanText(If.Kids[0], Text);
    const Node &Then = If.Kids[1];
    bool Returns = Then.Kind == "ReturnStmt" && Then.Kids.empty();
    if (!BoundText || !CondText || Guard == Returns)
      continue;
    if (Guard && D + 2 != Body.Kids.size())
      continue; // the guarded statement must end the kernel
    if (!Guard && D + 2 == Body.Kids.size())
      continue; // nothing after the return
    std::vector<const Node *> Loop;
    if (Guard)
      Loop.push_back(&Then);
    for (size_t I = D + 2; I < Body.Kids.size(); ++I)
      Loop.push_back(&Body.Kids[I]);
    std::vector<const Node *> Exits;
    if (!loopableBody(Loop, Fixed, Exits))
      continue;

    // Where the text goes: whole lines from the index's declaration to the
    // end of the if's head (its condition's ')', or its return's ';').
    if (!Decl.BeginPlain || !Decl.Begin || !If.Kids[0].End)
      continue;
    size_t Begin = lineStart(Text, *Decl.Begin);
    std::string Indent = Text.substr(Begin, *Decl.Begin - Begin);
    if (!blank(Indent))
      continue;
    size_t After = *If.Kids[0].End + If.Kids[0].EndTokLen;
    After = Text.find_first_not_of(" \t\n", After);
    if (After == std::string::npos || Text[After] != ')')
      continue;
    ++After;          // past the if's ')'
    std::string Rest; // what follows the head on its line
    size_t End = 0;
    if (Guard) {
      End = pastLine(Text, After);
      if (End == std::string::npos)
        continue;
      Rest = Text.substr(After, End - After);
    } else {
      size_t Semi = Text.find_first_not_of(" \t\n", After);
      if (Semi == std::string::npos || Text.compare(Semi, 6, "return") != 0)
        continue;
      Semi = Text.find_first_not_of(" \t\n", Semi + 6);
      if (Semi == std::string::npos || Text[Semi] != ';')
        continue;
      End = pastLine(Text, Semi);
      if (End == std::string::npos ||
          !blank(Text.substr(Semi + 1, End - Semi - 2)))
        continue;
    }
    std::string Lines = Text.substr(Begin, End - Begin);
    bool Directive = false;
    for (const std::string &Ln : split(Lines, '\n')) {
      size_t First = Ln.find_first_not_of(" \t");
      Directive |= First != std::string::npos && Ln[First] == '#';
      Directive |= !Ln.empty() && Ln.back() == '\\';
    }
    if (Directive || Text.find("r3_pass") != std::string::npos ||
        Text.find("r3_k") != std::string::npos)
      continue;
    // The kernel's closing brace, on a line of its own, ends the loop of
    // the returning shape.
    size_t Close = 0;
    if (!Guard) {
      if (!Body.End || *Body.End >= Text.size() || Text[*Body.End] != '}')
        continue;
      Close = lineStart(Text, *Body.End);
      if (!blank(Text.substr(Close, *Body.End - Close)))
        continue;
    }

    RewriteSite S;
    S.What = RewriteSite::Kind::GridStride;
    S.Knob = GridStrideKnob;
    S.Values = {"0", "1", "2", "4"};
    S.Describe = "one element per thread (" + Iv + ", line " +
                 std::to_string(lineOf(Text, *Decl.Begin)) +
                 "): 1 a grid-stride loop, 2|4 elements a thread a pass";
    std::string Stride = "gridDim.x * blockDim.x";
    std::string Keep = Guard ? "(" + *CondText + ")" : "!(" + *CondText + ")";
    std::string Open = Guard ? Rest : " {\n";
    RewriteSite::Edit Head;
    Head.Begin = Begin;
    Head.End = End;
    Head.Alternatives["1"] = Indent + "for (" + Type + " " + Iv + " = " +
                             *Init + "; " + Keep + "; " + Iv + " += " + Stride +
                             ")" + Open;
    for (const char *K : {"2", "4"})
      Head.Alternatives[K] =
          Indent + "for (" + Type + " r3_pass = (" + Type +
          ")blockIdx.x * blockDim.x * " + K + "; r3_pass < (" + *BoundText +
          "); r3_pass += " + Stride + " * " + K + ")\n#pragma unroll\n" +
          Indent + "  for (" + Type + " r3_k = 0, " + Iv +
          " = r3_pass + threadIdx.x; r3_k < " + K + "; ++r3_k, " + Iv +
          " += blockDim.x)\n" + Indent + "    if (" + Keep + ")" + Open;
    S.Edits.push_back(std::move(Head));
    // Each return of the body's own level becomes the loop's continue: its
    // line, with the one word changed.
    std::set<size_t> ReturnLines;
    bool Plain = true;
    for (const Node *R : Exits) {
      if (!R->BeginPlain || !R->Begin ||
          Text.compare(*R->Begin, 6, "return") != 0) {
        Plain = false;
        break;
      }
      size_t From = lineStart(Text, *R->Begin), To = pastLine(Text, *R->Begin);
      std::string Line = Text.substr(
          From, To == std::string::npos ? std::string::npos : To - From);
      size_t First = Line.find_first_not_of(" \t");
      if (To == std::string::npos || !ReturnLines.insert(From).second ||
          (First != std::string::npos && Line[First] == '#') ||
          Line.find('\\') != std::string::npos) {
        Plain = false;
        break;
      }
      RewriteSite::Edit E;
      E.Begin = From;
      E.End = To;
      std::string Continue = Line;
      Continue.replace(*R->Begin - From, 6, "continue");
      for (const char *K : {"1", "2", "4"})
        E.Alternatives[K] = Continue;
      S.Edits.push_back(std::move(E));
    }
    if (!Plain)
      continue;
    if (!Guard) {
      RewriteSite::Edit Tail;
      Tail.Begin = Tail.End = Close;
      for (const char *K : {"1", "2", "4"})
        Tail.Alternatives[K] = Indent + "}\n";
      S.Edits.push_back(std::move(Tail));
    }
    return S;
  }
  return std::nullopt;
}

} // namespace

std::vector<std::string> astDumpArguments(const std::string &Kernel) {
  return {"-fsyntax-only", "-Xclang", "-ast-dump=json", "-Xclang",
          "-ast-dump-filter=" + Kernel};
}

bool isRewriteKnob(const std::string &Name) {
  return Name.rfind("R3_RW_", 0) == 0;
}

Expected<RewriteModel> findRewrites(const std::string &AstJson,
                                    const std::string &File,
                                    const std::string &Text,
                                    const std::string &Kernel,
                                    const std::vector<ParamFact> &Facts) {
  // The dump is one JSON document per declaration that matched the filter.
  std::vector<ojson> Json;
  std::istringstream In(AstJson);
  try {
    while (In >> std::ws, In.peek() != EOF) {
      ojson J;
      In >> J;
      Json.push_back(std::move(J));
    }
  } catch (const std::exception &E) {
    return makeError("clang's AST dump of ", File, " is not JSON: ", E.what());
  }
  Reader R(File);
  std::vector<Node> Docs(Json.size());
  for (size_t I = 0; I < Json.size(); ++I)
    R.read(Json[I], Docs[I], nullptr);
  const Node *F = findKernel(Docs, Kernel);
  if (!F)
    return makeError("clang's AST of ", File, " has no definition of ", Kernel);
  RewriteModel M;
  M.Kernel = Kernel;
  const Node *Decl = F->Parent ? F->Parent : F; // a template's own start
  M.DeclLineStart = lineStart(Text, Decl->Begin.value_or(*F->Loc));

  // Loops without a loop hint, each on a line of its own; a loop that
  // reads gridDim strides over the grid.
  std::set<size_t> Lines;
  visit(*F, [&](const Node &N) {
    if (isLoop(N.Kind))
      visit(N, [&](const Node &E) {
        if (E.J->contains("type") &&
            (*E.J)["type"]
                    .value("qualType", "")
                    .find("__cuda_builtin_gridDim_t") != std::string::npos)
          M.GridStride = true;
      });
    if (!isLoop(N.Kind) || !N.BeginPlain || !N.Begin || *N.Begin >= Text.size())
      return;
    if (N.Parent && N.Parent->Kind == "AttributedStmt")
      return; // #pragma unroll or another loop hint already there
    size_t Start = lineStart(Text, *N.Begin);
    std::string Indent = Text.substr(Start, *N.Begin - Start);
    if (Indent.find_first_not_of(" \t") != std::string::npos)
      return; // shares its line with other code
    size_t Line = lineOf(Text, *N.Begin);
    if (!Lines.insert(Line).second)
      return;
    RewriteSite S;
    S.What = RewriteSite::Kind::Unroll;
    S.Knob = "R3_RW_UNROLL_L" + std::to_string(Line);
    S.Values = {"0", "1", "2", "4", "8"};
    if (constantTrips(N))
      S.Values.push_back("-1");
    S.Describe = "loop at line " + std::to_string(Line);
    S.LineStart = Start;
    S.Indent = Indent;
    M.Sites.push_back(std::move(S));
  });

  // One element per thread, where no loop strides over the grid already
  // and no loop hint lies in the lines it replaces.
  if (!M.GridStride)
    if (std::optional<RewriteSite> G = gridStrideSite(*F, Text)) {
      bool Clear = true;
      for (const RewriteSite &U : M.Sites)
        for (const RewriteSite::Edit &E : G->Edits)
          Clear &= !(U.LineStart > E.Begin && U.LineStart < E.End);
      if (Clear)
        M.Sites.push_back(std::move(*G));
    }

  // Pointer parameters whose recorded regions nobody else's overlap.
  std::vector<const Node *> Params;
  for (const Node &K : F->Kids)
    if (K.Kind == "ParmVarDecl")
      Params.push_back(&K);
  if (!Facts.empty() && Facts.size() == Params.size()) {
    std::map<size_t, int> Users;
    for (const ParamFact &P : Facts)
      if (P.Pointer && P.Region)
        ++Users[*P.Region];
    RewriteSite S;
    S.What = RewriteSite::Kind::Restrict;
    S.Knob = "R3_RW_RESTRICT";
    bool AnyConst = false;
    for (size_t I = 0; I < Params.size(); ++I) {
      const Node &P = *Params[I];
      const ParamFact &Fact = Facts[I];
      std::string Type =
          P.J->contains("type") ? (*P.J)["type"].value("qualType", "") : "";
      std::string Name = P.J->value("name", "");
      if (!Fact.Pointer || !Fact.Region || Users[*Fact.Region] != 1 ||
          Name.empty() || Type.empty() || Type.back() != '*' ||
          Type.find("__restrict") != std::string::npos || !P.LocPlain ||
          !P.BeginPlain || !P.Loc || !P.Begin)
        continue;
      RewriteSite::Param Q;
      Q.Name = Name;
      Q.TypeBegin = *P.Begin;
      Q.NameBegin = *P.Loc;
      bool PointeeConst = Type.rfind("const ", 0) == 0;
      if (!PointeeConst && !Fact.RegionWritten) {
        std::string Id = P.J->value("id", "");
        bool ReadOnly = true;
        visit(*F, [&](const Node &N) {
          if (N.Kind == "DeclRefExpr" && N.J->contains("referencedDecl") &&
              (*N.J)["referencedDecl"].value("id", "") == Id && !onlyReads(N))
            ReadOnly = false;
        });
        Q.Const = ReadOnly;
        AnyConst |= ReadOnly;
      }
      S.Params.push_back(std::move(Q));
    }
    if (!S.Params.empty()) {
      S.Values = {"0", "1"};
      if (AnyConst)
        S.Values.push_back("2");
      std::vector<std::string> Names;
      for (const RewriteSite::Param &Q : S.Params)
        Names.push_back(Q.Name + (Q.Const ? " (const)" : ""));
      S.Describe = "pointer parameters " + join(Names, ", ");
      M.Sites.push_back(std::move(S));
    }
  }
  return M;
}

Expected<RewriteModel> rewritesOf(std::vector<std::string> Argv,
                                  const std::string &File,
                                  const std::string &Text,
                                  const std::string &Kernel,
                                  const std::vector<ParamFact> &Facts) {
  for (std::string &A : astDumpArguments(Kernel))
    Argv.push_back(std::move(A));
  auto Dump = TempFile::create(".json");
  if (!Dump)
    return Dump.takeError();
  ChildResult R;
  R3_TRY(moveInto(runCapturing(Argv, Dump->path()), R));
  if (!R.succeeded())
    return makeError("reading ", File, " with ", Argv[0], " failed (",
                     describeStatus(R.Status), "):\n",
                     trimmedDiagnostics(R.Output));
  std::string Json;
  R3_TRY(moveInto(readWholeFile(Dump->path(), "clang's AST dump"), Json));
  return findRewrites(Json, File, Text, Kernel, Facts);
}

std::string instrument(const std::string &Text, const RewriteModel &M) {
  std::vector<std::pair<size_t, std::string>> Inserts;
  std::vector<size_t> Order;
  std::string K = identifier(M.Kernel);
  // The ends of replaced lines first: where a loop's unroll block starts on
  // the next line, the replaced lines' #endif comes before it.
  for (const RewriteSite &S : M.Sites)
    for (const RewriteSite::Edit &E : S.Edits)
      if (E.Begin != E.End)
        Inserts.push_back({E.End, "#endif\n"});
  for (const RewriteSite &S : M.Sites) {
    if (S.What == RewriteSite::Kind::Unroll) {
      Inserts.push_back({S.LineStart, unrollBlock(S)});
      continue;
    }
    if (S.What == RewriteSite::Kind::GridStride) {
      // The original lines become the #else branch of a block whose other
      // branches are the alternatives.
      for (const RewriteSite::Edit &E : S.Edits) {
        std::string Open;
        for (const auto &[V, Alt] : E.Alternatives)
          Open += std::string(Open.empty() ? "#if " : "#elif ") + S.Knob +
                  " == " + V + "\n" + Alt;
        Inserts.push_back(
            {E.Begin, Open + (E.Begin == E.End ? "#endif\n" : "#else\n")});
      }
      continue;
    }
    Inserts.push_back({M.DeclLineStart, restrictBlock(K)});
    for (const RewriteSite::Param &Q : S.Params) {
      if (Q.Const)
        Inserts.push_back({Q.TypeBegin, "R3_RW_C_" + K + " "});
      Inserts.push_back({Q.NameBegin, "R3_RW_R_" + K + " "});
    }
  }
  // From the end, so that earlier offsets stay valid; inserts at one
  // offset end up in the order they were made.
  for (size_t I = 0; I < Inserts.size(); ++I)
    Order.push_back(I);
  std::sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    return Inserts[A].first != Inserts[B].first
               ? Inserts[A].first > Inserts[B].first
               : A > B;
  });
  std::string Out = Text;
  for (size_t I : Order)
    Out.insert(std::min(Inserts[I].first, Out.size()), Inserts[I].second);
  return Out;
}

unsigned gridStrideElements(const std::string &Value) {
  return Value == "1" || Value == "2" || Value == "4"
             ? unsigned(std::stoul(Value))
             : 0;
}

std::string resolve(const std::string &Instrumented,
                    const std::map<std::string, std::string> &Knobs) {
  auto value = [&](const std::string &Name) {
    auto It = Knobs.find(Name);
    return It == Knobs.end() ? std::string("0") : It->second;
  };
  // A rewrite's block: #if KNOB == V, #elif KNOB == V ..., an optional
  // #else (the lines as written), #endif; conditionals of the text itself
  // may nest inside a branch.
  static const std::regex Branch(R"(^#(?:el)?if (R3_RW_\w+) == (-?\d+)$)");
  static const std::regex Nested(R"(^\s*#\s*(if|ifdef|ifndef)\b.*)");
  static const std::regex Closing(R"(^\s*#\s*endif\b.*)");
  std::vector<std::string> Lines = split(Instrumented, '\n');
  std::string Out;
  std::map<std::string, std::string> Tokens; // macro -> its text
  for (size_t I = 0; I < Lines.size(); ++I) {
    const std::string &L = Lines[I];
    std::smatch Mm;
    if (L.rfind("#ifndef R3_RW_RESTRICT", 0) == 0) {
      std::string V = value("R3_RW_RESTRICT");
      for (; I < Lines.size() && Lines[I] != "#endif // R3_RW_RESTRICT"; ++I) {
        static const std::regex Def(R"(^#define (R3_RW_([RC])_\w+)( .*)?$)");
        std::smatch D;
        if (std::regex_match(Lines[I], D, Def) && !Tokens.count(D[1].str()))
          Tokens[D[1].str()] = D[2] == "R" ? (V != "0" ? "__restrict__ " : "")
                                           : (V == "2" ? "const " : "");
      }
      continue;
    }
    if (std::regex_match(L, Mm, Branch) && L.rfind("#if ", 0) == 0) {
      std::string Knob = Mm[1].str(), V = value(Knob);
      std::vector<std::string> Chosen, Else;
      enum { Skip, Take, TakeElse } Mode = Skip;
      bool Found = false;
      int Depth = 0;
      for (; I < Lines.size(); ++I) {
        const std::string &B = Lines[I];
        std::smatch Bm;
        if (Depth == 0 && std::regex_match(B, Bm, Branch) && Bm[1] == Knob) {
          Mode = !Found && Bm[2] == V ? Take : Skip;
          Found |= Mode == Take;
          continue;
        }
        if (Depth == 0 && B == "#else") {
          Mode = TakeElse;
          continue;
        }
        if (Depth == 0 && B == "#endif")
          break;
        if (std::regex_match(B, Nested))
          ++Depth;
        else if (std::regex_match(B, Closing))
          --Depth;
        if (Mode == Take)
          Chosen.push_back(B);
        else if (Mode == TakeElse)
          Else.push_back(B);
      }
      for (const std::string &C : Found ? Chosen : Else)
        Out += C + "\n";
      continue;
    }
    Out += L;
    if (I + 1 < Lines.size())
      Out += "\n";
  }
  for (const auto &[Macro, Replacement] : Tokens) {
    std::string Key = Macro + " ";
    for (size_t At = Out.find(Key); At != std::string::npos;
         At = Out.find(Key, At + Replacement.size()))
      Out.replace(At, Key.size(), Replacement);
  }
  return Out;
}

} // namespace r3
