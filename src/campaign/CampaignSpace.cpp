// The search spaces a campaign defines: the inner loop's compiler × launch
// space (one parameter per domain that has a choice, in a fixed order, so a
// point's meaning does not depend on how the file was written), the outer
// loop's source space per kernel, the settings a point stands for, and the
// sizes `r3 tune --dry-run` prints.
#include "campaign/Campaign.h"
#include "compile/CompileCommands.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace r3 {
namespace {

using search::Param;
using search::ParamKind;

/// The level a parameter of the inner space belongs to.
enum class Level { Compiler, Launch };

const char *const LaunchNames[] = {"block_x",        "block_y",
                                   "block_z",        "dynamic_shared",
                                   "cache_preference", "grid_x",
                                   "grid_per_sm"};

Level levelOf(const std::string &Name) {
  for (const char *L : LaunchNames)
    if (Name == L)
      return Level::Launch;
  return Level::Compiler;
}

void addCategorical(std::vector<Param> &Out, const std::string &Name,
                    const std::vector<std::string> &Values) {
  if (Values.size() > 1)
    Out.push_back({Name, ParamKind::Categorical, Values, {}, 0, 0});
}

/// An ordinal over numbers, in increasing order whatever the file's order.
template <typename T>
void addOrdinal(std::vector<Param> &Out, const std::string &Name,
                std::vector<T> Values) {
  if (Values.size() < 2)
    return;
  std::sort(Values.begin(), Values.end());
  Param P{Name, ParamKind::Ordinal, {}, {}, 0, 0};
  for (T V : Values) {
    P.Values.push_back(std::to_string(V));
    P.Numbers.push_back(double(V));
  }
  Out.push_back(std::move(P));
}

std::vector<std::string> boolTexts(const std::vector<bool> &Values) {
  std::vector<std::string> Out;
  for (bool B : Values)
    Out.push_back(B ? "true" : "false");
  return Out;
}

/// The value of a domain at P: the space's parameter when it has one, the
/// only value of a one-value domain, or nothing.
template <typename T>
std::optional<std::string> pick(const search::Space &S, const search::Point &P,
                                const std::string &Name,
                                const std::vector<T> &Values) {
  int I = S.find(Name);
  if (I >= 0 && size_t(I) < P.Values.size())
    return S.valueText(P, size_t(I));
  if (Values.size() == 1) {
    if constexpr (std::is_same_v<T, std::string>)
      return Values.front();
    else
      return std::to_string(Values.front());
  }
  return std::nullopt;
}

int pickInt(const search::Space &S, const search::Point &P,
            const std::string &Name, const std::vector<int> &Values,
            int Default) {
  auto V = pick(S, P, Name, Values);
  if (!V)
    return Default;
  auto N = parseInteger(*V, INT32_MIN, INT32_MAX); // the space's own values
  return N ? int(*N) : Default;
}

uint32_t pickU32(const search::Space &S, const search::Point &P,
                 const std::string &Name, const std::vector<uint32_t> &Values,
                 uint32_t Default) {
  auto V = pick(S, P, Name, Values);
  if (!V)
    return Default;
  auto N = parseInteger(*V, 0, UINT32_MAX);
  return N ? uint32_t(*N) : Default;
}

std::string pickText(const search::Space &S, const search::Point &P,
                     const std::string &Name,
                     const std::vector<std::string> &Values) {
  return pick(S, P, Name, Values).value_or("");
}

/// The base pipeline with the extra passes appended.
std::string pipelineText(const Campaign &C, const search::Space &S,
                         const search::Point &P) {
  std::string Base = pickText(S, P, "pipeline", C.Compiler.Pipelines);
  int I = S.find("passes");
  std::string Extra =
      I >= 0 && size_t(I) < P.Values.size() ? S.valueText(P, size_t(I)) : "";
  if (Base.empty() || Extra.empty())
    return Base + Extra;
  return Base + "," + Extra;
}

/// A count as users read it: exact below a million, else three digits.
std::string formatCount(double N) {
  char Buf[32];
  if (N < 1e6)
    std::snprintf(Buf, sizeof(Buf), "%.0f", N);
  else
    std::snprintf(Buf, sizeof(Buf), "%.3g", N);
  return Buf;
}

std::string plural(double N, const std::string &One, const std::string &Many) {
  return formatCount(N) + " " + (N == 1 ? One : Many);
}

std::string paramText(const Param &P) {
  if (P.Kind == ParamKind::Sequence)
    return P.Name + "(" + std::to_string(P.MinLength) + ".." +
           std::to_string(P.MaxLength) + " of " +
           std::to_string(P.Values.size()) + ")";
  return P.Name + "(" + std::to_string(P.Values.size()) + ")";
}

/// "pipeline(3) x codegen_opt(2) = 6 points" for one level of the inner
/// space.
std::string levelText(const search::Space &Inner, Level L,
                      const std::string &Fixed) {
  std::vector<Param> Params;
  std::vector<std::string> Parts;
  for (const Param &P : Inner.Params)
    if (levelOf(P.Name) == L) {
      Params.push_back(P);
      Parts.push_back(paramText(P));
    }
  if (Params.empty())
    return Fixed + " = 1 point";
  double Size = search::Space(Params).size();
  return join(Parts, " x ") + " = " + plural(Size, "point", "points");
}

std::string sourceText(const KernelSpec &K) {
  if (K.Source.empty())
    return "the recorded code only (no 'source')";
  search::SourceSpaceModel M = sourceSpace(K);
  std::vector<std::string> Parts = {
      plural(double(M.Files.size()), "file", "files")};
  for (const search::KnobDomain &D : M.Knobs)
    Parts.push_back(D.Name + "(" + std::to_string(D.Values.size()) + ")");
  return join(Parts, " x ") + " = " + plural(M.size(), "variant", "variants");
}

} // namespace

search::Space innerSpace(const Campaign &C) {
  const CompilerSpec &Cc = C.Compiler;
  const LaunchSpec &L = C.Launch;
  std::vector<Param> Ps;
  addCategorical(Ps, "toolchain", Cc.Toolchains);
  addCategorical(Ps, "pipeline", Cc.Pipelines);
  if (Cc.MaxPasses > 0 && !Cc.Passes.empty())
    Ps.push_back(
        {"passes", ParamKind::Sequence, Cc.Passes, {}, 0, Cc.MaxPasses});
  addOrdinal(Ps, "codegen_opt", Cc.CodegenOpt);
  addOrdinal(Ps, "max_registers", Cc.MaxRegisters);
  addCategorical(Ps, "fast_math", boolTexts(Cc.FastMath));
  addCategorical(Ps, "launch_bounds", Cc.LaunchBounds);
  addCategorical(Ps, "specialize", Cc.Specialize);
  addCategorical(Ps, "nvcc_options", Cc.NvccOptions);
  addOrdinal(Ps, "block_x", L.BlockX);
  addOrdinal(Ps, "block_y", L.BlockY);
  addOrdinal(Ps, "block_z", L.BlockZ);
  addOrdinal(Ps, "dynamic_shared", L.DynamicShared);
  addCategorical(Ps, "cache_preference", L.CachePreference);
  addOrdinal(Ps, "grid_x", L.GridX);
  addOrdinal(Ps, "grid_per_sm", L.GridPerSm);
  return search::Space(std::move(Ps));
}

search::Space launchSpace(const Campaign &C) {
  std::vector<Param> Ps;
  for (const Param &P : innerSpace(C).Params)
    if (levelOf(P.Name) == Level::Launch)
      Ps.push_back(P);
  return search::Space(std::move(Ps));
}

search::SourceSpaceModel sourceSpace(const KernelSpec &K) {
  search::SourceSpaceModel M;
  if (!K.Source.empty()) {
    M.Files.push_back(K.Source);
    M.Files.insert(M.Files.end(), K.Files.begin(), K.Files.end());
  }
  M.Knobs = K.Knobs;
  return M;
}

InnerSettings innerSettings(const Campaign &C, const search::Space &S,
                            const search::Point &P) {
  const CompilerSpec &Cc = C.Compiler;
  const LaunchSpec &L = C.Launch;
  InnerSettings Out;
  CompileSettings &Cs = Out.Compiler;
  // The domains' values were checked when the campaign was read.
  Cs.Pipeline = pipelineText(C, S, P);
  Cs.CodegenOpt = pickInt(S, P, "codegen_opt", Cc.CodegenOpt, -1);
  Cs.Toolchain = parseCudaToolchain(pickText(S, P, "toolchain", Cc.Toolchains))
                     .value_or(CudaToolchain::Llvm);
  Cs.MaxRegisters =
      static_cast<uint32_t>(pickInt(S, P, "max_registers", Cc.MaxRegisters, 0));
  Cs.FastMath = pickText(S, P, "fast_math", boolTexts(Cc.FastMath)) == "true";
  if (auto B =
          parseLaunchBounds(pickText(S, P, "launch_bounds", Cc.LaunchBounds)))
    Cs.Bounds = *B;
  if (Error E =
          parseSpecialize(pickText(S, P, "specialize", Cc.Specialize), Cs))
    Cs.SpecializeArgs = Cs.SpecializeDims = false;
  Cs.NvccOptions =
      splitCommandLine(pickText(S, P, "nvcc_options", Cc.NvccOptions));
  Out.CachePreference = pickText(S, P, "cache_preference", L.CachePreference);
  Out.DynamicShared = pickU32(S, P, "dynamic_shared", L.DynamicShared, 0);
  Out.GridX = pickU32(S, P, "grid_x", L.GridX, 0);
  Out.GridPerSm = pickU32(S, P, "grid_per_sm", L.GridPerSm, 0);
  if (!L.BlockX.empty() || !L.BlockY.empty() || !L.BlockZ.empty())
    Out.Block = Dim3{pickU32(S, P, "block_x", L.BlockX, 1),
                     pickU32(S, P, "block_y", L.BlockY, 1),
                     pickU32(S, P, "block_z", L.BlockZ, 1)};
  // What a toolchain cannot apply is not part of the candidate, so that
  // points differing only there are one candidate (the history keeps it
  // once).
  dropInapplicable(Cs);
  return Out;
}

/// The LLM operator's line: where its calls go and what they may spend.
static std::string llmText(const Campaign &C) {
  const LlmSpec &L = C.Llm;
  std::vector<std::string> Models;
  for (const LlmModelSpec &M : L.Models) {
    char W[32];
    std::snprintf(W, sizeof W, " (weight %g)", M.Weight);
    Models.push_back(M.Name + (L.Models.size() > 1 ? W : ""));
  }
  double Rate = 0, Total = 0;
  for (const auto &[Name, R] : C.Source.Operators) {
    Total += R;
    Rate += Name == "llm" ? R : 0;
  }
  char Share[48];
  std::snprintf(Share, sizeof Share, "%.0f%% of the children",
                Total > 0 ? 100 * Rate / Total : 0.0);
  // Budgets are exact counts, not space sizes: no rounding.
  auto count = [](uint64_t N, const char *One, const char *Many) {
    return std::to_string(N) + " " + (N == 1 ? One : Many);
  };
  std::string Budget =
      (L.MaxCalls ? count(L.MaxCalls, "call", "calls") : "no call limit") +
      std::string(", ") +
      (L.MaxTotalTokens ? count(L.MaxTotalTokens, "token", "tokens")
                        : "no token limit");
  return "llm: " + join(Models, ", ") + " at " + L.Endpoint + ", " +
         std::to_string(L.Concurrency) + " in flight, " + Share + "; " +
         Budget + (L.ApiKeyEnv.empty() ? "" : "; key from $" + L.ApiKeyEnv);
}

std::vector<std::string> describeSpaces(const Campaign &C) {
  std::vector<std::string> Lines;
  for (const KernelSpec &K : C.Kernels)
    Lines.push_back("kernel " + K.Name + ": source level: " + sourceText(K));
  search::Space Inner = innerSpace(C);
  Lines.push_back("compiler level: " +
                  levelText(Inner, Level::Compiler, "the recorded settings"));
  Lines.push_back(
      "launch level: " +
      (C.Target == Backend::Host
           ? std::string("(none for backend host)")
           : levelText(Inner, Level::Launch, "the recorded launch")));
  Lines.push_back("inner space: " + plural(Inner.size(), "point", "points"));
  Lines.push_back(
      "strategies: source " + C.Source.Strategy + ", compiler " +
      C.Compiler.Strategy + "; budget " +
      plural(double(C.Budget.Evaluations), "evaluation", "evaluations") + ", " +
      std::to_string(C.Budget.InnerEvaluations) + " per source variant");
  if (C.Llm.Given)
    Lines.push_back(llmText(C));
  return Lines;
}

} // namespace r3
