// Kernel and launch lookup (the rules are in KernelLookup.h). Demangled names
// are taken apart by bracket depth, so that "(anonymous namespace)::k",
// "void f<int>(int*)" and "ns::f<a::b>" each give the right bare name.
#include "capture/KernelLookup.h"

#include "capture/CaptureReader.h"
#include "support/Demangle.h"
#include "support/StringUtil.h"

#include <algorithm>

namespace r3 {

namespace {

// --- taking a demangled name apart ---

int depthStep(char C) {
  return (C == '(' || C == '<' || C == '[')   ? 1
         : (C == ')' || C == '>' || C == ']') ? -1
                                              : 0;
}

/// "f<int>" of "f<int>(int*)": the text before the parameter list that
/// ends the name, if it ends with one.
std::string_view withoutParameters(std::string_view D) {
  if (D.empty() || D.back() != ')')
    return D;
  int Depth = 0;
  for (size_t I = D.size(); I-- > 0;) {
    Depth -= D[I] == ')' ? 1 : D[I] == '(' ? -1 : 0;
    if (Depth == 0)
      return D.substr(0, I);
  }
  return D;
}

/// "f<int>" of "void f<int>": what follows the last blank outside brackets.
std::string_view withoutReturnType(std::string_view Head) {
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I < Head.size(); ++I) {
    Depth += depthStep(Head[I]);
    if (Depth == 0 && Head[I] == ' ')
      Start = I + 1;
  }
  return Head.substr(Start);
}

/// "ns::C::f" of "ns::C<int>::f<2>".
std::string withoutTemplateArguments(std::string_view Name) {
  std::string Out;
  int Depth = 0;
  for (char C : Name) {
    if (C == '<')
      ++Depth;
    else if (C == '>')
      --Depth;
    else if (Depth == 0)
      Out += C;
  }
  return Out;
}

/// The name and every tail of it after a "::" outside brackets.
void addTails(const std::string &Name, std::vector<std::string> &Out) {
  Out.push_back(Name);
  int Depth = 0;
  for (size_t I = 0; I + 1 < Name.size(); ++I) {
    Depth += depthStep(Name[I]);
    if (Depth == 0 && Name[I] == ':' && Name[I + 1] == ':')
      Out.push_back(Name.substr(I + 2));
  }
}

std::string demangledOr(const KernelName &K) {
  return K.Demangled.empty() ? K.Mangled : K.Demangled;
}

std::string bareName(const KernelName &K) {
  return std::string(withoutReturnType(withoutParameters(demangledOr(K))));
}

/// Rule 4's names of a kernel.
std::vector<std::string> looseNames(const KernelName &K) {
  std::string Bare = bareName(K);
  std::vector<std::string> Out;
  addTails(Bare, Out);
  addTails(withoutTemplateArguments(Bare), Out);
  return Out;
}

bool matchesRule(const KernelName &K, int Rule, std::string_view Given) {
  switch (Rule) {
  case 1:
    return K.Mangled == Given;
  case 2:
    return K.Demangled == Given;
  case 3:
    return bareName(K) == Given;
  default: {
    std::vector<std::string> L = looseNames(K);
    return std::find(L.begin(), L.end(), Given) != L.end();
  }
  }
}

/// The kernels a rule matches, one per mangled name.
std::vector<uint32_t> matchesOf(std::span<const KernelName> Kernels, int Rule,
                                std::string_view Given) {
  std::vector<uint32_t> Out;
  for (uint32_t I = 0; I < Kernels.size(); ++I) {
    bool Seen = std::any_of(Out.begin(), Out.end(), [&](uint32_t J) {
      return Kernels[J].Mangled == Kernels[I].Mangled;
    });
    if (!Seen && matchesRule(Kernels[I], Rule, Given))
      Out.push_back(I);
  }
  return Out;
}

/// The names a "did you mean" may offer: each kernel's mangled and
/// demangled names, and its bare name where that names it alone.
std::vector<std::string> suggestible(std::span<const KernelName> Kernels) {
  std::vector<std::string> Out;
  for (const KernelName &K : Kernels) {
    Out.push_back(K.Mangled);
    if (!K.Demangled.empty())
      Out.push_back(K.Demangled);
    if (matchesOf(Kernels, 3, bareName(K)).size() == 1)
      Out.push_back(bareName(K));
  }
  return Out;
}

Error noKernel(std::span<const KernelName> Kernels, std::string_view Given,
               std::string_view Where, std::string_view In) {
  std::string Msg = std::string(Where) + ": no kernel '" + std::string(Given) +
                    "' in " + std::string(In);
  if (auto Near = closestMatch(Given, suggestible(Kernels)))
    return makeError(Msg, "; did you mean '", *Near, "'?");
  std::vector<std::string> Names;
  for (const KernelName &K : Kernels)
    Names.push_back(demangledOr(K));
  return makeError(
      Msg, " (kernels: ", Names.empty() ? "none" : join(Names, ", "), ")");
}

Error ambiguous(std::span<const KernelName> Kernels,
                const std::vector<uint32_t> &Matches, std::string_view Given,
                std::string_view Where, std::string_view In) {
  std::vector<std::string> Names;
  for (uint32_t I : Matches)
    Names.push_back(demangledOr(Kernels[I]));
  return makeError(Where, ": the kernel name '", Given, "' is ambiguous in ",
                   In, ": it names ", join(Names, ", "),
                   "; give the full demangled name or the mangled one");
}

std::vector<KernelName> namesOf(std::span<const KernelInfo> Kernels) {
  std::vector<KernelName> Out;
  for (const KernelInfo &K : Kernels)
    Out.push_back(
        {K.Name, K.Demangled.empty() ? demangle(K.Name) : K.Demangled});
  return Out;
}

} // namespace

std::vector<KernelName> kernelNamesOf(const std::vector<std::string> &Mangled) {
  std::vector<KernelName> Out;
  for (const std::string &M : Mangled)
    Out.push_back({M, demangle(M)});
  return Out;
}

Expected<uint32_t> lookupKernel(std::span<const KernelName> Kernels,
                                std::string_view Given, std::string_view Where,
                                std::string_view In) {
  for (int Rule = 1; Rule <= 4; ++Rule) {
    std::vector<uint32_t> M = matchesOf(Kernels, Rule, Given);
    if (M.size() == 1)
      return M.front();
    if (M.size() > 1)
      return ambiguous(Kernels, M, Given, Where, In);
  }
  return noKernel(Kernels, Given, Where, In);
}

CaptureView viewOf(const CaptureReader &R) {
  return {R.path(), R.kernels(), R.launches()};
}

Expected<uint32_t> findKernel(const CaptureView &C, std::string_view Given) {
  std::vector<KernelName> Names = namesOf(C.Kernels);
  uint32_t First = 0;
  R3_TRY(moveInto(lookupKernel(Names, Given, C.Path, "the capture"), First));
  // The same kernel in several modules: the copy whose launches were
  // recorded.
  std::vector<uint32_t> Recorded;
  std::vector<std::string> Modules;
  for (uint32_t K = 0; K < Names.size(); ++K)
    if (Names[K].Mangled == Names[First].Mangled && !launchesOf(C, K).empty()) {
      Recorded.push_back(K);
      Modules.push_back(std::to_string(C.Kernels[K].Module));
    }
  if (Recorded.size() > 1)
    return makeError(C.Path, ": kernel '", demangledOr(Names[First]),
                     "' is in ", Recorded.size(),
                     " modules of the capture (modules ", join(Modules, ", "),
                     "), each with recorded launches, which r3 cannot tell "
                     "apart by name");
  return Recorded.empty() ? First : Recorded.front();
}

Expected<uint32_t> findKernel(const CaptureReader &R, std::string_view Given) {
  return findKernel(viewOf(R), Given);
}

std::string shownKernelName(const CaptureView &C, uint32_t K) {
  std::vector<KernelName> Names = namesOf(C.Kernels);
  std::string Bare = bareName(Names[K]);
  if (matchesOf(Names, 3, Bare).size() == 1)
    return Bare;
  return demangledOr(Names[K]);
}

std::string shownLaunchName(const CaptureView &C, uint32_t L) {
  return "launch " + std::to_string(C.Launches[L].Ordinal) + " of '" +
         shownKernelName(C, C.Launches[L].Kernel) + "'";
}

// --- launches ---

std::optional<LaunchRef> parseLaunchRef(std::string_view Text) {
  LaunchRef Ref;
  if (Text.starts_with('@')) {
    Ref.By = LaunchNumbering::CaptureIndex;
    Text.remove_prefix(1);
  }
  auto N = parseUnsigned(Text);
  if (!N || (Ref.By == LaunchNumbering::CaptureIndex && *N > UINT32_MAX))
    return std::nullopt;
  Ref.Number = *N;
  return Ref;
}

std::string launchRefText(const LaunchRef &Ref) {
  return (Ref.By == LaunchNumbering::CaptureIndex ? "@" : "") +
         std::to_string(Ref.Number);
}

std::vector<uint32_t> launchesOf(const CaptureView &C, uint32_t K) {
  std::vector<uint32_t> Out;
  for (uint32_t L = 0; L < C.Launches.size(); ++L)
    if (C.Launches[L].Kernel == K)
      Out.push_back(L);
  return Out;
}

namespace {

/// "launch 3", "launches 0 to 2", "launches 0, 2, 5".
std::string describeOrdinals(std::vector<uint64_t> O) {
  std::sort(O.begin(), O.end());
  if (O.size() == 1)
    return "launch " + std::to_string(O[0]);
  if (O.back() - O.front() + 1 == O.size())
    return "launches " + std::to_string(O.front()) + " to " +
           std::to_string(O.back());
  std::vector<std::string> Parts;
  for (size_t I = 0; I < O.size(); ++I) {
    if (O.size() > 8 && I == 6) {
      Parts.push_back("...");
      I = O.size() - 1;
    }
    Parts.push_back(std::to_string(O[I]));
  }
  return "launches " + join(Parts, ", ");
}

std::vector<uint64_t> ordinalsOf(const CaptureView &C, uint32_t K) {
  std::vector<uint64_t> Out;
  for (uint32_t L : launchesOf(C, K))
    Out.push_back(C.Launches[L].Ordinal);
  return Out;
}

/// Why kernel K has no launch N: which of its launches the capture holds,
/// in words that match r3 record's when it holds all of them.
Error noLaunch(const CaptureView &C, uint32_t K, uint64_t N) {
  std::string Name = shownKernelName(C, K);
  std::vector<uint64_t> O = ordinalsOf(C, K);
  std::string Head = std::string(C.Path) + ": kernel '" + Name + "' has no ";
  if (O.empty())
    return makeError(Head, "recorded launch (the capture holds none of its "
                           "launches)");
  uint64_t InApp = C.Kernels[K].AppDurationsNs.size();
  std::sort(O.begin(), O.end());
  bool All = O.front() == 0 && O.back() + 1 == O.size() && InApp == O.size();
  if (All)
    return makeError(Head, "launch ", N, "; launches are counted from 0: '",
                     Name, "' was launched ",
                     O.size() == 1 ? std::string("once (launch 0)")
                                   : std::to_string(O.size()) + " times (" +
                                         describeOrdinals(O) + ")");
  std::string Of = InApp > O.size() ? " (of " + std::to_string(InApp) +
                                          " in the application)"
                                    : "";
  return makeError(Head, "recorded launch ", N, ": the capture holds its ",
                   describeOrdinals(O), Of,
                   "; launches are numbered from 0 in the order the "
                   "application made them");
}

/// Why no kernel has a launch N: which launches each kernel has.
Error noKernelHas(const CaptureView &C, uint64_t N) {
  std::vector<std::string> Held;
  for (uint32_t K = 0; K < C.Kernels.size(); ++K)
    if (std::vector<uint64_t> O = ordinalsOf(C, K); !O.empty())
      Held.push_back("'" + shownKernelName(C, K) + "' " + describeOrdinals(O));
  return makeError(C.Path, ": no kernel has a recorded launch ", N,
                   " (the capture holds ",
                   Held.empty() ? "no launch" : join(Held, "; "), ")");
}

Expected<uint32_t> byIndex(const CaptureView &C, uint64_t N) {
  size_t Count = C.Launches.size();
  if (N < Count)
    return static_cast<uint32_t>(N);
  if (Count == 0)
    return makeError(C.Path, ": no launch @", N,
                     ": the capture holds no launch");
  return makeError(C.Path, ": no launch @", N, ": the capture holds ", Count,
                   Count == 1 ? " launch (@0)"
                              : " launches (@0 to @" +
                                    std::to_string(Count - 1) + ")");
}

} // namespace

Expected<uint32_t> findLaunch(const CaptureView &C, uint32_t K, LaunchRef Ref) {
  if (Ref.By == LaunchNumbering::CaptureIndex) {
    uint32_t L = 0;
    R3_TRY(moveInto(byIndex(C, Ref.Number), L));
    uint32_t Of = C.Launches[L].Kernel;
    if (Of != K)
      return makeError(C.Path, ": launch @", L, " is launch ",
                       C.Launches[L].Ordinal, " of kernel '",
                       shownKernelName(C, Of), "', not a launch of '",
                       shownKernelName(C, K), "'");
    return L;
  }
  std::vector<std::string> Found;
  uint32_t First = 0;
  for (uint32_t L : launchesOf(C, K))
    if (C.Launches[L].Ordinal == Ref.Number) {
      First = Found.empty() ? L : First;
      Found.push_back("@" + std::to_string(L));
    }
  if (Found.empty())
    return noLaunch(C, K, Ref.Number);
  if (Found.size() > 1)
    return makeError(C.Path, ": kernel '", shownKernelName(C, K), "' has ",
                     Found.size(), " recorded launches numbered ", Ref.Number,
                     " (", join(Found, ", "),
                     "); name one by its capture index, @N");
  return First;
}

Expected<uint32_t> findLaunch(const CaptureReader &R, uint32_t K,
                              LaunchRef Ref) {
  return findLaunch(viewOf(R), K, Ref);
}

Expected<uint32_t> findLaunch(const CaptureView &C, LaunchRef Ref) {
  if (Ref.By == LaunchNumbering::CaptureIndex)
    return byIndex(C, Ref.Number);
  if (C.Kernels.size() == 1)
    return findLaunch(C, 0, Ref);
  std::vector<uint32_t> Found;
  std::vector<std::string> Kernels, At;
  for (uint32_t L = 0; L < C.Launches.size(); ++L)
    if (C.Launches[L].Ordinal == Ref.Number) {
      Found.push_back(L);
      Kernels.push_back("'" + shownKernelName(C, C.Launches[L].Kernel) + "'");
      At.push_back("@" + std::to_string(L));
    }
  if (Found.size() == 1)
    return Found.front();
  if (Found.size() > 1)
    return makeError(C.Path, ": launch ", Ref.Number,
                     " is ambiguous: ", join(Kernels, " and "),
                     " each have a launch ", Ref.Number,
                     "; name the kernel, or the capture's launch (",
                     join(At, " or "), ")");
  return noKernelHas(C, Ref.Number);
}

std::string baseName(const std::string &Demangled) {
  std::string S = Demangled;
  // Cut the parameter list, then template arguments, then the scope.
  int Depth = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    Depth += S[I] == '<' ? 1 : S[I] == '>' ? -1 : 0;
    if (S[I] == '(' && Depth == 0) {
      S.resize(I);
      break;
    }
  }
  if (!S.empty() && S.back() == '>') {
    Depth = 0;
    for (size_t I = S.size(); I-- > 0;) {
      Depth += S[I] == '>' ? 1 : S[I] == '<' ? -1 : 0;
      if (Depth == 0) {
        S.resize(I);
        break;
      }
    }
  }
  size_t Colon = S.rfind("::");
  if (Colon != std::string::npos)
    S = S.substr(Colon + 2);
  size_t Space = S.find_last_of(' '); // "void k" from some demanglers
  return Space == std::string::npos ? S : S.substr(Space + 1);
}

} // namespace r3
