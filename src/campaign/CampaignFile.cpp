// The campaign file reader. toml++ parses the text and keeps each node's
// line and column; this file walks the tables with typed reads that record a
// mistake instead of stopping, so one run over the file reports every
// mistake ("FILE:LINE:COL: ..."), sorted by position, with "did you mean"
// for misspelt keys and choices. Backend-specific keys are refused on the
// other backend by name, relative paths resolve against the file's folder,
// and files the campaign needs must exist. The reference of the format is
// share/campaign.toml.
#include "campaign/Campaign.h"

#include "campaign/TomlReader.h"
#include "compile/cuda/LaunchBounds.h"
#include "replay/LaunchRule.h"
#include "search/Strategy.h"
#include "search/llm/Prompt.h"
#include "support/FileUtil.h"
#include "support/Paths.h"
#include "support/StringUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace r3 {
namespace {

using namespace tomlread;
namespace fs = std::filesystem;

/// A knob value: an integer or a string, kept as text.
std::optional<std::string> knobValue(Reader &R, const toml::node &N,
                                     const std::string &What) {
  if (auto *I = N.as_integer())
    return std::to_string(I->get());
  if (auto *S = N.as_string(); S && !S->get().empty())
    return S->get();
  R.D.at(N, What + " must be an integer or a non-empty string, got " +
                describeNode(N));
  return std::nullopt;
}

/// A GPU: an ordinal (0, 1, ...) or a name CUDA_VISIBLE_DEVICES takes
/// ("GPU-8f0e...", "MIG-...").
std::optional<std::string> gpuName(Reader &R, const toml::node &N,
                                   const std::string &What) {
  if (auto *I = N.as_integer(); I && I->get() >= 0)
    return std::to_string(I->get());
  if (auto *S = N.as_string(); S && !S->get().empty() &&
                               S->get().find(',') == std::string::npos)
    return S->get();
  R.D.at(N, What + " must be a GPU ordinal (0, 1, ...) or a GPU UUID, got " +
                describeNode(N));
  return std::nullopt;
}

bool isIdentifier(std::string_view S) {
  auto Head = [](char C) { return std::isalpha((unsigned char)C) || C == '_'; };
  if (S.empty() || !Head(S[0]))
    return false;
  return std::all_of(S.begin(), S.end(), [&](char C) {
    return Head(C) || std::isdigit((unsigned char)C);
  });
}

// --- durations and pipelines ---

/// "90s", "30m", "2h", "1d", "1h30m" or "1.5h" in seconds.
std::optional<double> parseDuration(std::string_view S) {
  double Total = 0;
  size_t I = 0;
  if (S.empty())
    return std::nullopt;
  while (I < S.size()) {
    size_t Start = I;
    while (I < S.size() && (std::isdigit((unsigned char)S[I]) || S[I] == '.'))
      ++I;
    if (I == Start || I == S.size())
      return std::nullopt;
    auto V = parseDouble(S.substr(Start, I - Start));
    if (!V)
      return std::nullopt; // "1.2.3h", or more digits than a double holds
    static const std::string Units = "smhd";
    static const double Scale[] = {1, 60, 3600, 86400};
    size_t U = Units.find(S[I++]);
    if (U == std::string::npos)
      return std::nullopt;
    Total += *V * Scale[U];
  }
  return Total > 0 && std::isfinite(Total) ? std::optional(Total)
                                           : std::nullopt;
}

/// A positive, finite number of seconds, or a duration string; none for
/// anything else.
std::optional<double> durationSeconds(const toml::node &N) {
  std::optional<double> V = N.value<double>();
  if (auto *Str = N.as_string())
    V = parseDuration(Str->get());
  if (V && *V > 0 && std::isfinite(*V))
    return V;
  return std::nullopt;
}

/// What is wrong with a pipeline's text at a glance, or nothing; LLVM's
/// parser checks the pass names when a candidate compiles.
std::optional<std::string> pipelineProblem(std::string_view P) {
  if (P.empty())
    return "is empty";
  if (P.find_first_of(" \t\n") != std::string_view::npos)
    return "contains spaces (LLVM's pipeline syntax has none)";
  std::string Open;
  char Prev = ',';
  for (char C : P) {
    if ((C == ',' || C == ')') && (Prev == ',' || Prev == '('))
      return std::string("has an empty pass name");
    if (C == '(' || C == '<')
      Open += C;
    else if (C == ')' || C == '>') {
      if (Open.empty() || Open.back() != (C == ')' ? '(' : '<'))
        return std::string("has unbalanced parentheses or brackets");
      Open.pop_back();
    }
    Prev = C;
  }
  if (!Open.empty())
    return std::string("has unbalanced parentheses or brackets");
  if (Prev == ',')
    return std::string("has an empty pass name");
  for (size_t At = P.find("default<"); At != std::string_view::npos;
       At = P.find("default<", At + 1)) {
    std::string_view Level = P.substr(At + 8, 3);
    if (Level.size() < 3 || Level[0] != 'O' || Level[1] < '0' ||
        Level[1] > '3' || Level[2] != '>')
      return std::string("uses a default pipeline other than default<O0> to "
                         "default<O3>");
  }
  return std::nullopt;
}

// --- sections ---

void readVerify(Reader &R, const Section &S, VerifySettings &V) {
  R.checkKeys(S, {"tolerance", "value", "dtype", "poison"});
  R.readEnum(S, "tolerance", V.Tolerance, {"exact", "abs", "rel", "ulp"});
  R.read(S, "value", V.Value, R.numbers(0, Bound::AtLeast));
  R.readEnum(S, "dtype", V.Type, {"bytes", "f32", "f64"});
  R.readEnum(S, "poison", V.Poison, {"auto", "on", "off"});
  if (V.Tolerance == ToleranceKind::Ulp && V.Value != std::floor(V.Value))
    R.D.at(*S.get("value"), "'value' of an ulp tolerance must be a whole "
                            "number of units, got " +
                                describeNode(*S.get("value")));
  if (V.Tolerance != ToleranceKind::Exact && V.Type == ElementType::Bytes)
    R.D.at(*S.get("tolerance"),
           "tolerance " + quote(toleranceKindName(V.Tolerance)) +
               " needs dtype = \"f32\" or \"f64\": the element type the "
               "outputs are compared as");
}

void readKnobs(Reader &R, const Section &S,
               std::vector<search::KnobDomain> &Knobs) {
  for (const toml::key *K : keysInFileOrder(S.T)) {
    std::string Name(K->str());
    if (!isIdentifier(Name)) {
      R.D.at(*K, "knob name '" + Name +
                     "' must be a C identifier (it becomes -D" + Name +
                     "=...)");
      continue;
    }
    search::KnobDomain Domain{Name, {}};
    R.readList(S, Name, Domain.Values, with(R, knobValue));
    if (const toml::array *A = S.get(Name)->as_array(); A && A->empty())
      R.D.at(*A, "knob '" + Name + "' has no values");
    Knobs.push_back(std::move(Domain));
  }
}

void readLaunches(Reader &R, const Section &S, KernelSpec &K) {
  const toml::node *N = S.get("launches");
  if (!N || N->value<std::string>() == "all")
    return;
  if (!N->is_array())
    R.D.at(*N, "'launches' must be \"all\" or a list of the kernel's launch "
               "numbers, got " +
                   describeNode(*N));
  else
    R.readList(S, "launches", K.Launches, R.ints(0, UINT32_MAX));
}

void readSources(Reader &R, const Section &S, KernelSpec &K) {
  R.read(S, "source", K.Source, R.element(&Reader::path));
  R.readList(S, "files", K.Files, R.element(&Reader::path));
  if (S.get("files") && !S.get("source"))
    R.D.at(*S.key("files"), "'files' needs 'source' in the same [[kernel]] "
                            "(variant 0 is the kernel's own source)");
  if (const toml::node *Flags = S.get("cflags"); Flags && !Flags->is_array())
    R.D.at(*Flags, "'cflags' must be a list of flags, such as [\"-O2\", "
                   "\"-DN=4\"], got " +
                       describeNode(*Flags));
  else
    R.readList(S, "cflags", K.CFlags, R.element(&Reader::string));
  R.read(S, "compile_commands", K.CompileCommands, R.element(&Reader::path));
  if (S.get("cflags") && S.get("compile_commands"))
    R.D.at(*S.key("compile_commands"),
           "'cflags' and 'compile_commands' are alternatives; give one");
  R.read(S, "grid_rule", K.GridRule, R.element(&Reader::string));
  if (R.Target == Backend::Host && !K.GridRule.empty() &&
      K.GridRule != "keep_threads")
    R.D.at(*S.get("grid_rule"), "'grid_rule' must be \"keep_threads\" with "
                                "backend = \"host\" (host launches have no "
                                "grid), got " +
                                    quote(K.GridRule));
  else if (R.Target == Backend::Cuda && !K.GridRule.empty()) {
    K.GridRule = launchRuleText(K.GridRule);
    if (auto Rule = parseGridRule(K.GridRule); !Rule)
      R.D.at(*S.get("grid_rule"), Rule.takeError().message());
  }
}

} // namespace

std::string launchRuleText(const std::string &CampaignRule) {
  if (CampaignRule == "keep_threads" || CampaignRule == "keep-threads")
    return "keep-threads";
  if (CampaignRule == "keep_grid" || CampaignRule == "keep-grid")
    return "keep-grid";
  if (CampaignRule.find('=') == std::string::npos)
    return "x=" + CampaignRule; // "ceil(arg3 / block_x)": the x dimension
  return CampaignRule;
}

namespace {

KernelSpec readKernel(Reader &R, const Section &S) {
  R.checkKeys(S, {"name", "capture", "launches", "source", "files", "cflags",
                  "compile_commands", "grid_rule", "grid_stride", "extract",
                  "verify", "knobs", "share"});
  KernelSpec K;
  R.read(S, "name", K.Name, R.element(&Reader::string));
  if (const toml::node *N = S.get("share")) {
    auto V = R.number(*N, "'share'", 0, Bound::Above);
    if (V && *V > 1)
      R.D.at(*N, "'share' is the kernel's share of the application's run, "
                 "above 0 and at most 1, got " +
                     describeNode(*N));
    else
      K.Share = V;
  }
  if (R.MissingCapturesOk)
    if (const toml::node *N = S.get("capture"))
      if (auto Given = R.string(*N, "'capture'"))
        if (!pathExists(R.resolve(*Given))) {
          R.MissingCaptures.push_back(*Given);
          R.MissingCaptureNodes.push_back(N);
          K.Capture = R.resolve(*Given);
        }
  if (K.Capture.empty())
    R.read(S, "capture", K.Capture, R.element(&Reader::path));
  for (const char *Required : {"name", "capture"})
    if (!S.get(Required))
      R.D.at(S.T, "[[kernel]] needs '" + std::string(Required) + "'");
  readLaunches(R, S, K);
  readSources(R, S, K);
  R.read(S, "extract", K.Extract, R.booleans());
  if (K.Extract && !S.get("source"))
    R.D.at(*S.key("extract"), "'extract' needs the kernel's 'source'");
  if (S.get("grid_stride") && R.cudaOnly(S, "grid_stride")) {
    bool G = false;
    R.read(S, "grid_stride", G, R.booleans());
    K.GridStride = G;
  }
  if (auto V = subSection(R, S, "verify", "[kernel.verify]"))
    readVerify(R, *V, K.Verify);
  if (auto V = subSection(R, S, "knobs", "[kernel.knobs]"))
    readKnobs(R, *V, K.Knobs);
  return K;
}

void readKernels(Reader &R, const Section &Top, std::vector<KernelSpec> &Out) {
  const toml::node *N = Top.get("kernel");
  const toml::array *A = N ? N->as_array() : nullptr;
  if (N && (!A || (!A->empty() && !A->is_array_of_tables()))) {
    R.D.at(*N, "'kernel' must be an array of tables ([[kernel]]), got " +
                   describeNode(*N));
    return;
  }
  if (!A || A->empty()) {
    R.D.at(toml::source_region{{1, 1}, {1, 1}, nullptr},
           "the campaign names no kernel; add a [[kernel]] section");
    return;
  }
  std::set<std::string> Names;
  for (const toml::node &E : *A) {
    Out.push_back(readKernel(R, Section{*E.as_table(), "[[kernel]]"}));
    if (!Out.back().Name.empty() && !Names.insert(Out.back().Name).second)
      R.D.at(*E.as_table()->get("name"),
             "kernel " + quote(Out.back().Name) + " is named twice");
  }
}

void readBudget(Reader &R, const Section &S, BudgetSpec &B) {
  R.checkKeys(
      S, {"evaluations", "wall_time", "target_speedup", "inner_evaluations"});
  R.read(S, "evaluations", B.Evaluations, R.ints(1));
  R.read(S, "inner_evaluations", B.InnerEvaluations, R.ints(1, UINT32_MAX));
  R.read(S, "target_speedup", B.TargetSpeedup, R.numbers(1, Bound::Above));
  const toml::node *N = S.get("wall_time");
  if (!N)
    return;
  if (std::optional<double> V = durationSeconds(*N))
    B.WallSeconds = *V;
  else
    R.D.at(*N, "'wall_time' must be a duration such as \"90s\", \"30m\", "
               "\"2h\" or \"1d\" (or a number of seconds), got " +
                   describeNode(*N));
}

void readOperators(Reader &R, const Section &S, SourceSpec &Src) {
  R.checkKeys(S, {"knob", "rewrite", "crossover", "llm"});
  Src.Operators.clear();
  double Total = 0;
  for (auto &&[K, V] : S.T) {
    std::string Name(K.str());
    if (Name == "llm" && !R.LlmGiven) {
      R.D.at(K, "the llm operator needs an [llm] section (its endpoint and "
                "model)");
      continue;
    }
    if (auto Rate = R.number(V, "the rate of operator '" + Name + "'", 0,
                             Bound::AtLeast)) {
      Src.Operators.emplace_back(Name, *Rate);
      Total += *Rate;
    }
  }
  if (Total == 0)
    R.D.at(S.T, "'operators' must give at least one operator a positive rate");
}

void readSource(Reader &R, const Section &S, SourceSpec &Src) {
  R.checkKeys(S, {"strategy", "islands", "migration_interval", "descriptors",
                  "operators"});
  R.read(S, "strategy", Src.Strategy, R.oneOf({"map-elites", "none"}));
  R.read(S, "islands", Src.Islands, R.ints(1, 1024));
  R.read(S, "migration_interval", Src.MigrationInterval, R.ints(1, UINT32_MAX));
  if (auto Ops = subSection(R, S, "operators", "[source.operators]"))
    readOperators(R, *Ops, Src);
}

/// A base pipeline: the text checked at a glance.
std::optional<std::string> pipeline(Reader &R, const toml::node &N,
                                    const std::string &What) {
  auto P = R.string(N, What);
  if (auto Problem = P ? pipelineProblem(*P) : std::nullopt) {
    R.D.at(N, "pipeline " + quote(*P) + " " + *Problem);
    P.reset();
  }
  return P;
}

/// "llvm", or on cuda also "nvrtc" and "nvcc".
std::optional<std::string> toolchain(Reader &R, const toml::node &N,
                                     const std::string &What) {
  auto T = R.choice(N, What, {"llvm", "nvrtc", "nvcc"});
  if (T && *T != "llvm" && R.Target == Backend::Host) {
    R.D.at(N, "toolchain " + quote(*T) +
                  " needs backend = \"cuda\" (this campaign's backend is "
                  "\"host\")");
    T.reset();
  }
  return T;
}

/// One choice of nvcc options: a string of them, "" for none.
std::optional<std::string> nvccOptions(Reader &R, const toml::node &N,
                                       const std::string &What) {
  if (auto *S = N.as_string())
    return S->get();
  R.D.at(N, What + " must be a string of nvcc options (\"\" for none), got " +
                describeNode(N));
  return std::nullopt;
}

/// "T" or "T,B": threads per block (1-1024), optionally blocks per SM.
std::optional<std::string> launchBounds(Reader &R, const toml::node &N,
                                        const std::string &What) {
  std::string Text = N.is_integer() ? std::to_string(*N.value<int64_t>())
                                    : N.value<std::string>().value_or("");
  if (auto B = parseLaunchBounds(Text); B && *B)
    return Text;
  R.D.at(N, What +
                " must be \"T\" or \"T,B\" (T threads per block, 1 to "
                "1024; B blocks per multiprocessor), got " +
                describeNode(N));
  return std::nullopt;
}

void readCompiler(Reader &R, const Section &S, CompilerSpec &C) {
  R.checkKeys(S, {"strategy", "toolchains", "pipelines", "pass_list",
                  "max_passes", "codegen_opt", "max_registers", "fast_math",
                  "launch_bounds", "specialize", "nvcc_options"});
  auto Names = search::strategyNames();
  R.read(S, "strategy", C.Strategy,
         R.oneOf(std::vector<std::string>(Names.begin(), Names.end())));
  R.readList(S, "toolchains", C.Toolchains, with(R, toolchain));
  R.readList(S, "pipelines", C.Pipelines, with(R, pipeline));
  R.read(S, "pass_list", C.PassList, R.element(&Reader::path));
  R.read(S, "max_passes", C.MaxPasses, R.ints(0, 64));
  R.readList(S, "codegen_opt", C.CodegenOpt, R.ints(0, 3));
  if (R.cudaOnly(S, "max_registers"))
    R.readList(S, "max_registers", C.MaxRegisters, R.ints(0, 255));
  if (R.cudaOnly(S, "fast_math"))
    R.readList(S, "fast_math", C.FastMath, R.booleans());
  if (R.cudaOnly(S, "launch_bounds"))
    R.readList(S, "launch_bounds", C.LaunchBounds, with(R, launchBounds));
  if (R.cudaOnly(S, "specialize"))
    R.readList(S, "specialize", C.Specialize,
               R.oneOf({"none", "args", "dims"}));
  if (R.cudaOnly(S, "nvcc_options"))
    R.readList(S, "nvcc_options", C.NvccOptions, with(R, nvccOptions));
}

void checkBlock(Reader &R, const Section &S, const LaunchSpec &L) {
  if (L.BlockX.empty() && (S.get("block_y") || S.get("block_z")))
    R.D.at(S.get("block_y") ? *S.key("block_y") : *S.key("block_z"),
           "'block_y' and 'block_z' need 'block_x' in the same [launch]");
  auto Least = [](const std::vector<uint32_t> &V) {
    return V.empty() ? uint64_t(1) : *std::min_element(V.begin(), V.end());
  };
  uint64_t Threads = Least(L.BlockX) * Least(L.BlockY) * Least(L.BlockZ);
  if (Threads > 1024)
    R.D.at(S.key("block_x") ? *S.key("block_x") : *S.key("block_y"),
           "even the smallest block (block_x * block_y * block_z = " +
               std::to_string(Threads) +
               ") has more than 1024 threads: no combination can launch");
}

void readLaunch(Reader &R, const Section &S, LaunchSpec &L) {
  R.checkKeys(S, {"block_x", "block_y", "block_z", "dynamic_shared",
                  "cache_preference", "grid_x", "grid_per_sm"});
  if (R.cudaOnly(S, "grid_x"))
    R.readList(S, "grid_x", L.GridX, R.ints(0, INT32_MAX));
  if (R.cudaOnly(S, "grid_per_sm"))
    R.readList(S, "grid_per_sm", L.GridPerSm, R.ints(0, 1024));
  if (S.get("grid_x") && S.get("grid_per_sm"))
    R.D.at(*S.key("grid_per_sm"),
           "'grid_x' and 'grid_per_sm' are alternatives; give one");
  const char *Keys[] = {"block_x", "block_y", "block_z"};
  std::vector<uint32_t> *Dims[] = {&L.BlockX, &L.BlockY, &L.BlockZ};
  for (int I = 0; I < 3; ++I)
    if (R.cudaOnly(S, Keys[I]))
      R.readList(S, Keys[I], *Dims[I], R.ints(1, I == 2 ? 64 : 1024));
  if (R.cudaOnly(S, "dynamic_shared"))
    R.readList(S, "dynamic_shared", L.DynamicShared, R.ints(0, UINT32_MAX));
  if (R.cudaOnly(S, "cache_preference"))
    R.readList(S, "cache_preference", L.CachePreference,
               R.oneOf({"none", "shared", "l1", "equal"}));
  if (R.Target == Backend::Cuda)
    checkBlock(R, S, L);
}

void readEvaluation(Reader &R, const Section &S, EvaluationSpec &E) {
  R.checkKeys(S, {"warmup", "repetitions", "min_repetitions", "target_ci",
                  "timeout", "flush_l2", "baseline_interval",
                  "determinism_runs"});
  R.read(S, "warmup", E.Warmup, R.ints(0, 1000000));
  R.read(S, "repetitions", E.Repetitions, R.ints(1, 1000000));
  bool MinGiven = S.get("min_repetitions") != nullptr;
  R.read(S, "min_repetitions", E.MinRepetitions, R.ints(1, 1000000));
  if (!MinGiven)
    E.MinRepetitions = std::min(E.MinRepetitions, E.Repetitions);
  else if (E.MinRepetitions > E.Repetitions)
    R.D.at(*S.get("min_repetitions"),
           "'min_repetitions' (" + std::to_string(E.MinRepetitions) +
               ") must not exceed 'repetitions' (" +
               std::to_string(E.Repetitions) + ")");
  R.read(S, "target_ci", E.TargetCi, R.numbers(0, Bound::Above));
  R.read(S, "timeout", E.TimeoutSeconds, R.numbers(0, Bound::Above));
  if (R.cudaOnly(S, "flush_l2"))
    R.read(S, "flush_l2", E.FlushL2, R.booleans());
  R.read(S, "baseline_interval", E.BaselineInterval, R.ints(1, UINT32_MAX));
  if (R.cudaOnly(S, "determinism_runs"))
    R.read(S, "determinism_runs", E.DeterminismRuns, R.ints(0, 1000));
}

// --- descriptors: after the kernels, whose knobs they may name ---

/// The axis of a knob descriptor over every kernel, or nothing when a kernel
/// lacks the knob.
std::optional<search::DescriptorAxis>
knobAxis(const std::vector<KernelSpec> &Kernels, const std::string &Knob,
         std::string &Missing) {
  size_t Values = 0;
  for (const KernelSpec &K : Kernels) {
    auto It = std::find_if(K.Knobs.begin(), K.Knobs.end(),
                           [&](const auto &D) { return D.Name == Knob; });
    if (It == K.Knobs.end()) {
      Missing = K.Name;
      return std::nullopt;
    }
    Values = std::max(Values, It->Values.size());
  }
  // One value still gets a bin of width one, so the bin is well defined.
  double Max = Values > 1 ? double(Values - 1) : 1;
  return search::DescriptorAxis{"knob:" + Knob, 0, Max,
                                unsigned(std::max<size_t>(Values, 1))};
}

std::optional<search::DescriptorAxis> metricAxis(const std::string &Name) {
  if (Name == "registers")
    return search::DescriptorAxis{Name, 0, 255, 8};
  if (Name == "shared_bytes")
    return search::DescriptorAxis{Name, 0, 49152, 8};
  if (Name == "spills")
    return search::DescriptorAxis{Name, 0, 64, 4};
  if (Name == "source_bytes")
    return search::DescriptorAxis{Name, 0, 65536, 8};
  return std::nullopt;
}

std::optional<search::DescriptorAxis> descriptorAxis(Reader &R,
                                                     const Campaign &C,
                                                     const toml::node &N,
                                                     const std::string &What) {
  auto Name = R.string(N, What);
  if (!Name)
    return std::nullopt;
  if (Name->rfind("knob:", 0) == 0) {
    std::string Missing;
    auto Axis = knobAxis(C.Kernels, Name->substr(5), Missing);
    if (!Axis)
      R.D.at(N, "descriptor " + quote(*Name) + " names a knob that kernel " +
                    quote(Missing) + " does not have");
    return Axis;
  }
  if (!metricAxis(*Name)) {
    std::string Message = What +
                          " must be \"registers\", \"shared_bytes\", "
                          "\"spills\", \"source_bytes\" or "
                          "\"knob:NAME\", got " +
                          quote(*Name);
    if (auto Near = closestMatch(
            *Name, {"registers", "shared_bytes", "spills", "source_bytes"}))
      Message += "; did you mean " + quote(*Near) + "?";
    R.D.at(N, Message);
    return std::nullopt;
  }
  if (R.Target == Backend::Host && *Name != "source_bytes") {
    R.D.at(N, "descriptor " + quote(*Name) +
                  " needs backend = \"cuda\" (host compiles report no " +
                  *Name + ")");
    return std::nullopt;
  }
  return metricAxis(*Name);
}

void readDescriptors(Reader &R, const Section *S, Campaign &C) {
  std::vector<search::DescriptorAxis> &Out = C.Source.Descriptors;
  if (S && S->get("descriptors")) {
    R.readList(*S, "descriptors", Out,
               [&](const toml::node &N, const std::string &What) {
                 return descriptorAxis(R, C, N, What);
               });
    return;
  }
  if (C.Target == Backend::Cuda) {
    Out = {*metricAxis("registers"), *metricAxis("shared_bytes")};
    return;
  }
  if (C.Kernels.empty())
    return;
  std::string Missing;
  const auto &Knobs = C.Kernels.front().Knobs;
  for (size_t I = 0; I < Knobs.size() && Out.size() < 2; ++I)
    if (auto Axis = knobAxis(C.Kernels, Knobs[I].Name, Missing))
      Out.push_back(*Axis);
}

// --- the pass list ---

std::vector<std::string> readPassList(const std::string &Path) {
  std::ifstream In(Path);
  std::vector<std::string> Passes;
  for (std::string Line; std::getline(In, Line);) {
    Line = Line.substr(0, Line.find('#'));
    auto First = Line.find_first_not_of(" \t\r");
    if (First == std::string::npos)
      continue;
    Passes.push_back(
        Line.substr(First, Line.find_last_not_of(" \t\r") - First + 1));
  }
  return Passes;
}

void readPasses(Reader &R, const Section *S, CompilerSpec &C) {
  const toml::key *MaxKey = S ? S->key("max_passes") : nullptr;
  bool Given = S && S->get("pass_list");
  if (Given && C.PassList.empty())
    return; // reported: the named file does not exist
  if (!Given)
    C.PassList = (fs::path(shareDir()) / "passes" /
                  (R.Target == Backend::Cuda ? "cuda.txt" : "host.txt"))
                     .lexically_normal();
  if (pathExists(C.PassList))
    C.Passes = readPassList(C.PassList);
  else if (C.MaxPasses > 0 && MaxKey)
    R.D.at(*MaxKey, "'max_passes' needs a pass list, and the default one is "
                    "missing: " +
                        C.PassList +
                        " (install r3's share folder, set "
                        "R3_SHARE_DIR, or name one with "
                        "'pass_list')");
  if (C.MaxPasses > 0 && C.Passes.empty() && pathExists(C.PassList) && MaxKey)
    R.D.at(*MaxKey, "'max_passes' needs passes, and the pass list " +
                        C.PassList + " has none");
}

// --- the LLM operator ---

/// A model: "name", or { name = "...", weight = 2 }.
std::optional<LlmModelSpec> llmModel(Reader &R, const toml::node &N,
                                     const std::string &What) {
  if (auto *S = N.as_string(); S && !S->get().empty())
    return LlmModelSpec{S->get(), 1};
  const toml::table *T = N.as_table();
  if (!T) {
    R.D.at(N, What +
                  " must be a model name or { name = \"...\", weight = "
                  "N }, got " +
                  describeNode(N));
    return std::nullopt;
  }
  Section S{*T, "[llm] models"};
  R.checkKeys(S, {"name", "weight"});
  LlmModelSpec M;
  R.read(S, "name", M.Name, R.element(&Reader::string));
  R.read(S, "weight", M.Weight, R.numbers(0, Bound::Above));
  if (M.Name.empty()) {
    R.D.at(N, What + " needs a 'name'");
    return std::nullopt;
  }
  return M;
}

/// Seconds, or a duration.
void readSeconds(Reader &R, const Section &S, std::string_view Key,
                 double &Out) {
  const toml::node *N = S.get(Key);
  if (!N)
    return;
  if (std::optional<double> V = durationSeconds(*N))
    Out = *V;
  else
    R.D.at(*N, Reader::name(Key) + S.where() +
                   " must be a number of seconds or a duration such as "
                   "\"90s\", got " +
                   describeNode(*N));
}

void readLlmModels(Reader &R, const Section &S, LlmSpec &L) {
  if (S.get("model") && S.get("models"))
    R.D.at(*S.key("models"), "give 'model' or 'models' in [llm], not both");
  std::string One;
  R.read(S, "model", One, R.element(&Reader::string));
  if (!One.empty())
    L.Models = {{One, 1}};
  R.readList(S, "models", L.Models, with(R, llmModel));
  if (L.Models.empty() && !S.get("model") && !S.get("models"))
    R.D.at(S.T, "[llm] needs 'model' (or 'models', with weights)");
}

void readLlmPrompts(Reader &R, const Section &S, LlmSpec &L) {
  std::string Dir = (fs::path(shareDir()) / "prompts").lexically_normal();
  const toml::node *N = S.get("prompts");
  if (N) {
    auto Given = R.string(*N, "'prompts'");
    if (!Given)
      return;
    Dir = R.resolve(*Given);
  }
  L.Prompts = Dir;
  auto Loaded = llm::loadPrompts(Dir);
  if (Loaded)
    return;
  std::string Why = Loaded.error().message();
  if (N)
    R.D.at(*N, Why);
  else
    R.D.at(S.T, Why + " (install r3's share folder, set R3_SHARE_DIR, or "
                      "name a folder with 'prompts')");
}

void readLlm(Reader &R, const Section &S, LlmSpec &L) {
  R.checkKeys(S, {"endpoint", "model", "models", "api_key_env", "temperature",
                  "max_tokens", "concurrency", "timeout", "retries", "backoff",
                  "max_calls", "max_total_tokens", "prompts",
                  "failures_in_prompt"});
  L.Given = true;
  R.read(S, "endpoint", L.Endpoint, R.element(&Reader::string));
  if (!S.get("endpoint"))
    R.D.at(S.T, "[llm] needs 'endpoint' (the server's base URL, such as "
                "\"http://127.0.0.1:8000/v1\")");
  else if (!L.Endpoint.empty() && !L.Endpoint.starts_with("http://") &&
           !L.Endpoint.starts_with("https://"))
    R.D.at(*S.get("endpoint"), "'endpoint' must be an http:// or https:// "
                               "URL, got " +
                                   quote(L.Endpoint));
  readLlmModels(R, S, L);
  R.read(S, "api_key_env", L.ApiKeyEnv, R.element(&Reader::string));
  if (!L.ApiKeyEnv.empty() && !isIdentifier(L.ApiKeyEnv))
    R.D.at(*S.get("api_key_env"),
           "'api_key_env' must name an environment variable (the key itself "
           "never goes into the campaign file), got " +
               quote(L.ApiKeyEnv));
  R.read(S, "temperature", L.Temperature, R.numbers(0, Bound::AtLeast));
  R.read(S, "max_tokens", L.MaxTokens, R.ints(1, 10000000));
  R.read(S, "concurrency", L.Concurrency, R.ints(1, 256));
  readSeconds(R, S, "timeout", L.TimeoutSeconds);
  R.read(S, "retries", L.Retries, R.ints(0, 100));
  readSeconds(R, S, "backoff", L.BackoffSeconds);
  R.read(S, "max_calls", L.MaxCalls, R.ints(0));
  R.read(S, "max_total_tokens", L.MaxTotalTokens, R.ints(0));
  R.read(S, "failures_in_prompt", L.FailuresInPrompt, R.ints(0, 100));
  readLlmPrompts(R, S, L);
}

// --- the top level ---

void readTop(Reader &R, const Section &Top, Campaign &C) {
  R.checkKeys(Top, {"database", "backend", "seed", "workers", "gpus",
                    "kernel", "budget", "source", "compiler", "launch",
                    "evaluation", "llm"});
  R.readEnum(Top, "backend", C.Target, {"cuda", "host"});
  R.Target = C.Target;
  std::string Database = fs::path(C.Path).stem().string() + ".db";
  R.read(Top, "database", Database, R.element(&Reader::string));
  C.Database = R.resolve(Database);
  R.read(Top, "seed", C.Seed, R.ints(0));
  R.read(Top, "workers", C.Workers, R.ints(0, 4096));
  // GPUs as CUDA_VISIBLE_DEVICES names them: ordinals, or UUIDs.
  if (R.cudaOnly(Top, "gpus"))
    R.readList(Top, "gpus", C.Gpus, with(R, gpuName));
}

void readCampaign(Reader &R, const toml::table &Root, Campaign &C) {
  Section Top{Root, ""};
  readTop(R, Top, C);
  readKernels(R, Top, C.Kernels);
  auto Budget = subSection(R, Top, "budget", "[budget]");
  auto Source = subSection(R, Top, "source", "[source]");
  auto Compiler = subSection(R, Top, "compiler", "[compiler]");
  auto Launch = subSection(R, Top, "launch", "[launch]");
  auto Eval = subSection(R, Top, "evaluation", "[evaluation]");
  if (auto Llm = subSection(R, Top, "llm", "[llm]"))
    readLlm(R, *Llm, C.Llm);
  R.LlmGiven = C.Llm.Given;
  C.Source.Operators = {{"knob", 0.7}, {"crossover", 0.3}};
  if (Budget)
    readBudget(R, *Budget, C.Budget);
  if (Source)
    readSource(R, *Source, C.Source);
  readDescriptors(R, Source ? &*Source : nullptr, C);
  if (Compiler)
    readCompiler(R, *Compiler, C.Compiler);
  readPasses(R, Compiler ? &*Compiler : nullptr, C.Compiler);
  if (Launch)
    readLaunch(R, *Launch, C.Launch);
  if (Eval)
    readEvaluation(R, *Eval, C.Evaluation);
}

} // namespace

Expected<Campaign> parseCampaign(const std::string &Text,
                                 const std::string &Path,
                                 bool MissingCapturesOk) {
  Campaign C;
  C.Path = Path;
  C.Text = Text;
  C.Dir = fs::absolute(fs::path(Path)).lexically_normal().parent_path();
  Diagnostics D;
  toml::table Root;
  try {
    Root = toml::parse(std::string_view(Text), std::string_view(Path));
  } catch (const toml::parse_error &E) {
    D.at(E.source(), "TOML syntax: " + std::string(E.description()));
    return D.take(Path);
  }
  Reader R(D, C.Dir);
  R.MissingCapturesOk = MissingCapturesOk;
  readCampaign(R, Root, C);
  if (!D.empty()) {
    // Among other mistakes a missing capture is one more, where it is named.
    for (const toml::node *N : R.MissingCaptureNodes)
      R.path(*N, "'capture'");
    return D.take(Path);
  }
  C.MissingCaptures = std::move(R.MissingCaptures);
  return C;
}

Expected<Campaign> loadCampaign(const std::string &Path,
                                bool MissingCapturesOk) {
  std::string Text;
  R3_TRY(moveInto(readWholeFile(Path, "campaign file"), Text));
  return parseCampaign(Text, Path, MissingCapturesOk);
}

} // namespace r3
