// The typed reads the campaign file reader is built from: a TOML table
// walked with reads that record a mistake ("LINE:COL: what was expected, what
// was got") and keep the default instead of stopping, so that one pass over
// a file reports every mistake at once; unknown keys get "did you mean".
// Private to src/campaign (CampaignFile.cpp); a later section reader (the
// LLM operator's) reuses it.
#pragma once

#include "capture/Capture.h"
#include "support/Error.h"
#include "support/StringUtil.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace r3::tomlread {

namespace fs = std::filesystem;

constexpr int64_t NoLimit = std::numeric_limits<int64_t>::max();

inline std::string quote(std::string_view S) {
  return "\"" + std::string(S) + "\"";
}

/// The "got ..." part of a message: the value as written, or its kind.
inline std::string describeNode(const toml::node &N) {
  if (auto *S = N.as_string())
    return quote(S->get());
  if (auto *I = N.as_integer())
    return std::to_string(I->get());
  if (auto *F = N.as_floating_point()) {
    std::ostringstream OS;
    OS << F->get();
    return OS.str();
  }
  if (auto *B = N.as_boolean())
    return B->get() ? "true" : "false";
  if (N.is_array())
    return "an array";
  if (N.is_table())
    return "a table";
  return "a date or time";
}

/// What an integer read expects: its range when the range is a domain
/// (codegen_opt 0 to 3) or when Got exceeds it, else only its sign ("a
/// positive integer"), as a limit that only guards a type's width would
/// confuse.
inline std::string rangeText(int64_t Min, int64_t Max, const toml::node &Got) {
  auto *I = Got.as_integer();
  if (Max <= 65536 || (I && I->get() > Max))
    return "an integer from " + std::to_string(Min) + " to " +
           std::to_string(Max);
  return Min == 1   ? "a positive integer"
         : Min == 0 ? "a non-negative integer"
                    : "an integer of at least " + std::to_string(Min);
}

/// `"a", "b" or "c"`.
inline std::string choiceText(const std::vector<std::string> &Choices) {
  std::string S;
  for (size_t I = 0; I < Choices.size(); ++I) {
    if (I)
      S += I + 1 == Choices.size() ? " or " : ", ";
    S += quote(Choices[I]);
  }
  return S;
}

struct Mistake {
  toml::source_position Where;
  std::string Message;
};

/// Every mistake found in one file, reported together in file order.
class Diagnostics {
public:
  void at(const toml::source_region &R, std::string Message) {
    Mistakes.push_back({R.begin, std::move(Message)});
  }
  void at(const toml::node &N, std::string Message) {
    at(N.source(), std::move(Message));
  }
  void at(const toml::key &K, std::string Message) {
    at(K.source(), std::move(Message));
  }
  bool empty() const { return Mistakes.empty(); }
  Error take(const std::string &Path) {
    std::stable_sort(Mistakes.begin(), Mistakes.end(),
                     [](const Mistake &A, const Mistake &B) {
                       return std::pair(A.Where.line, A.Where.column) <
                              std::pair(B.Where.line, B.Where.column);
                     });
    std::vector<std::string> Lines;
    for (const Mistake &M : Mistakes)
      Lines.push_back(Path + ":" + std::to_string(M.Where.line) + ":" +
                      std::to_string(M.Where.column) + ": " + M.Message);
    return Error::make(join(Lines, "\n"));
  }

private:
  std::vector<Mistake> Mistakes;
};

/// One table of the file, named as the user wrote it ("[evaluation]").
struct Section {
  const toml::table &T;
  std::string Name;

  const toml::node *get(std::string_view Key) const { return T.get(Key); }
  const toml::key *key(std::string_view Key) const {
    auto It = T.find(Key);
    return It == T.end() ? nullptr : &It->first;
  }
  /// " in [evaluation]", or " at the top level".
  std::string where() const {
    return Name.empty() ? " at the top level" : " in " + Name;
  }
};

/// Whether a number's bound is part of its range.
enum class Bound { AtLeast, Above };

/// The typed reads: each records a mistake on a wrong value and leaves the
/// default in place, so that reading goes on. Element readers (integer,
/// choice, ...) read one node; ints(), oneOf(), ... bind their limits for
/// read() and readList().
class Reader {
public:
  Reader(Diagnostics &D, std::string Dir) : D(D), Dir(std::move(Dir)) {}
  /// A capture that does not exist yet is noted in MissingCaptures rather
  /// than reported (a dry run before the recipe recorded it).
  bool MissingCapturesOk = false;
  std::vector<std::string> MissingCaptures;
  std::vector<const toml::node *> MissingCaptureNodes; ///< where each is named

  Diagnostics &D;
  std::string Dir;
  Backend Target = Backend::Host;
  bool LlmGiven = false; ///< the campaign has an [llm] section

  /// Records each key of S not in Known, with the closest known one.
  void checkKeys(const Section &S, const std::vector<std::string> &Known);
  /// Whether Key is there and may be read: on the host backend a key that
  /// is there is a mistake (and false).
  bool cudaOnly(const Section &S, std::string_view Key);
  /// Element readers: N's value, or a mistake "What must be ..., got ...".
  std::optional<int64_t> integer(const toml::node &N, const std::string &What,
                                 int64_t Min, int64_t Max);
  std::optional<double> number(const toml::node &N, const std::string &What,
                               double Min, Bound B);
  std::optional<std::string> string(const toml::node &N,
                                    const std::string &What);
  std::optional<std::string> choice(const toml::node &N,
                                    const std::string &What,
                                    const std::vector<std::string> &Choices);
  std::optional<bool> boolean(const toml::node &N, const std::string &What);
  /// A path that must exist, made absolute.
  std::optional<std::string> path(const toml::node &N, const std::string &What);

  /// The element readers with their limits bound, for read and readList.
  auto ints(int64_t Min, int64_t Max = NoLimit) {
    return [=, this](const toml::node &N, const std::string &What) {
      return integer(N, What, Min, Max);
    };
  }
  auto numbers(double Min, Bound B) {
    return [=, this](const toml::node &N, const std::string &What) {
      return number(N, What, Min, B);
    };
  }
  auto oneOf(std::vector<std::string> Choices) {
    return [=, this](const toml::node &N, const std::string &What) {
      return choice(N, What, Choices);
    };
  }
  auto element(std::optional<std::string> (Reader::*F)(const toml::node &,
                                                       const std::string &)) {
    return [=, this](const toml::node &N, const std::string &What) {
      return (this->*F)(N, What);
    };
  }
  auto booleans() {
    return [this](const toml::node &N, const std::string &What) {
      return boolean(N, What);
    };
  }

  /// Key's value read by Element into Out, when the key is there.
  template <typename T, typename F>
  void read(const Section &S, std::string_view Key, T &Out, F Element) {
    if (const toml::node *N = S.get(Key))
      if (auto V = Element(*N, name(Key)))
        Out = T(*V);
  }
  /// The same for a value naming one of Names, stored as the enumerator of
  /// the same position.
  template <typename E>
  void readEnum(const Section &S, std::string_view Key, E &Out,
                const std::vector<std::string> &Names) {
    std::string V;
    read(S, Key, V, oneOf(Names));
    if (!V.empty())
      Out = E(std::find(Names.begin(), Names.end(), V) - Names.begin());
  }
  /// A list (or one value standing for a list of one), each element read
  /// by Element; an entry given twice is a mistake.
  template <typename T, typename F>
  void readList(const Section &S, std::string_view Key, std::vector<T> &Out,
                F Element) {
    const toml::node *N = S.get(Key);
    if (!N)
      return;
    Out.clear();
    const toml::array *A = N->as_array();
    if (!A) {
      if (auto V = Element(*N, name(Key)))
        Out.push_back(T(*V));
      return;
    }
    for (const toml::node &E : *A)
      if (auto V = Element(E, "each entry of " + name(Key)))
        Out.push_back(T(*V));
    checkUnique(*A, Key);
  }
  /// Records each value of A that repeats an earlier one.
  void checkUnique(const toml::array &A, std::string_view Key);
  /// P made absolute against the campaign file's folder.
  std::string resolve(const std::string &P) const {
    fs::path Q(P);
    return (Q.is_absolute() ? Q : fs::path(Dir) / Q).lexically_normal();
  }
  static std::string name(std::string_view Key) {
    return "'" + std::string(Key) + "'";
  }
};

inline void Reader::checkKeys(const Section &S,
                              const std::vector<std::string> &Known) {
  for (auto &&[K, V] : S.T) {
    std::string Key(K.str());
    if (std::find(Known.begin(), Known.end(), Key) != Known.end())
      continue;
    auto Near = closestMatch(Key, Known);
    if (S.Name.empty() && V.is_table())
      D.at(K, "unknown section [" + Key + "]" +
                  (Near ? "; did you mean [" + *Near + "]?" : ""));
    else
      D.at(K, "unknown key '" + Key + "'" + S.where() +
                  (Near ? "; did you mean '" + *Near + "'?" : ""));
  }
}

inline bool Reader::cudaOnly(const Section &S, std::string_view Key) {
  const toml::key *K = S.key(Key);
  if (!K)
    return false;
  if (Target == Backend::Cuda)
    return true;
  D.at(*K, name(Key) + " needs backend = \"cuda\" (this campaign's backend is "
                       "\"host\")");
  return false;
}

inline std::optional<int64_t> Reader::integer(const toml::node &N,
                                              const std::string &What,
                                              int64_t Min, int64_t Max) {
  if (auto *I = N.as_integer(); I && I->get() >= Min && I->get() <= Max)
    return I->get();
  D.at(N, What + " must be " + rangeText(Min, Max, N) + ", got " +
              describeNode(N));
  return std::nullopt;
}

inline std::optional<double> Reader::number(const toml::node &N,
                                            const std::string &What, double Min,
                                            Bound B) {
  std::optional<double> V = N.is_number() ? N.value<double>() : std::nullopt;
  if (V && std::isfinite(*V) && (B == Bound::AtLeast ? *V >= Min : *V > Min))
    return V;
  std::ostringstream Want;
  if (Min == 0)
    Want << (B == Bound::AtLeast ? "a non-negative number"
                                 : "a positive number");
  else
    Want << "a number " << (B == Bound::AtLeast ? "of at least " : "above ")
         << Min;
  D.at(N, What + " must be " + Want.str() + ", got " + describeNode(N));
  return std::nullopt;
}

inline std::optional<std::string> Reader::string(const toml::node &N,
                                                 const std::string &What) {
  if (auto *S = N.as_string(); S && !S->get().empty())
    return S->get();
  D.at(N, What + " must be a non-empty string, got " + describeNode(N));
  return std::nullopt;
}

inline std::optional<std::string>
Reader::choice(const toml::node &N, const std::string &What,
               const std::vector<std::string> &Choices) {
  auto *S = N.as_string();
  if (S && std::find(Choices.begin(), Choices.end(), S->get()) != Choices.end())
    return S->get();
  std::string Message =
      What + " must be " + choiceText(Choices) + ", got " + describeNode(N);
  if (S)
    if (auto Near = closestMatch(S->get(), Choices))
      Message += "; did you mean " + quote(*Near) + "?";
  D.at(N, Message);
  return std::nullopt;
}

inline std::optional<bool> Reader::boolean(const toml::node &N,
                                           const std::string &What) {
  if (auto *B = N.as_boolean())
    return B->get();
  D.at(N, What + " must be true or false, got " + describeNode(N));
  return std::nullopt;
}

inline std::optional<std::string> Reader::path(const toml::node &N,
                                               const std::string &What) {
  auto Given = string(N, What);
  if (!Given)
    return std::nullopt;
  std::string Abs = resolve(*Given);
  std::error_code EC;
  fs::file_status St = fs::status(Abs, EC);
  if (fs::exists(St) && !fs::is_directory(St))
    return Abs;
  std::string Msg = What +
                    (fs::exists(St) ? " names a folder, not a file: "
                                    : " names a file that does not exist: ") +
                    *Given;
  if (Abs != *Given)
    Msg += " (looked for " + Abs + ")";
  D.at(N, Msg);
  return std::nullopt;
}

inline void Reader::checkUnique(const toml::array &A, std::string_view Key) {
  std::set<std::string> Seen;
  for (const toml::node &E : A)
    if (E.is_value() && !Seen.insert(describeNode(E)).second)
      D.at(E, name(Key) + " lists " + describeNode(E) + " twice");
}

/// An element reader F(R, N, What) bound to R.
template <typename F> auto with(Reader &R, F Element) {
  return [&R, Element](const toml::node &N, const std::string &What) {
    return Element(R, N, What);
  };
}

/// The keys of T in the order the file gives them (toml++ keeps them
/// sorted by name).
inline std::vector<const toml::key *> keysInFileOrder(const toml::table &T) {
  std::vector<const toml::key *> Keys;
  for (auto &&[K, V] : T)
    Keys.push_back(&K);
  std::stable_sort(Keys.begin(), Keys.end(), [](auto *A, auto *B) {
    return std::pair(A->source().begin.line, A->source().begin.column) <
           std::pair(B->source().begin.line, B->source().begin.column);
  });
  return Keys;
}

inline std::optional<Section> subSection(Reader &R, const Section &Parent,
                                         std::string_view Key,
                                         std::string Name) {
  const toml::node *N = Parent.get(Key);
  if (!N)
    return std::nullopt;
  if (const toml::table *T = N->as_table())
    return Section{*T, std::move(Name)};
  R.D.at(*N, Reader::name(Key) + " must be a table (" + Name + "), got " +
                 describeNode(*N));
  return std::nullopt;
}

} // namespace r3::tomlread
