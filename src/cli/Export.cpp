// `r3 export`: the best variant of a kernel, for a build system. From the
// history (read-only, like `r3 report`), the kernel's best verified
// candidate (the report's "best") is written into a folder as its source
// text (named as the kernel's source file), a unified diff of that text
// against the kernel's original source, and its settings as settings.toml
// and settings.json: the flags the campaign compiled it with (the campaign's
// cflags, the source folder, the knobs as -D defines), the pipeline and code
// generation level that ran, launch settings, and its time, baseline and
// speedup. docs/export.md documents the keys.
//
// The flags come from the campaign file stored in the history, which must
// parse where export runs (it names its captures and sources relative to its
// folder); the texts come from the history's sources table.
#include "cli/Export.h"

#include "capture/CaptureReader.h"
#include "capture/KernelLookup.h"
#include "cli/Args.h"
#include "cli/Diagnostics.h"
#include "cli/Report.h"
#include "compile/Rewrite.h"
#include "replay/LaunchRule.h"
#ifdef R3_HAVE_CUDA
#include "cli/ExportCuda.h"
#endif
#include "r3/Version.h"
#include "support/Diff.h"
#include "support/FileUtil.h"
#include "support/Sha256.h"
#include "support/StringUtil.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace r3::cli {

namespace {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct ExportPlan {
  std::string History, Kernel, Dir;
  bool Force = false, Json = false;
};

/// What export writes: files by name, and the settings they describe.
struct ExportSet {
  std::vector<std::pair<std::string, std::string>> Files;
  json Settings;
};

/// The kernel's best candidate and where it comes from.
struct BestOf {
  KernelSummary Kernel;
  Campaign Spec;
  const KernelSpec *KSpec = nullptr;
  std::string Text, Original; ///< empty Text: the recorded code
  /// The rewrite operator's knobs of the best (compile/Rewrite.h): Text and
  /// Original are resolved to plain source, so these are in the text, not
  /// among the defines.
  std::map<std::string, std::string> Rewrites;
};

Expected<ExportPlan> parsePlan(const ParsedArgs &A) {
  if (A.Positional.size() != 1)
    return makeError("'r3 export' takes one campaign database, got ",
                     A.Positional.size());
  ExportPlan P{A.Positional[0], A.value("--kernel").value_or(""),
               A.value("--output").value_or(""), A.has("--force"), false};
  if (P.Kernel.empty())
    return Error::make("'r3 export' needs --kernel NAME: the kernel to export");
  if (P.Dir.empty())
    return Error::make("'r3 export' needs -o DIR: the folder to write");
  std::string Format;
  R3_TRY(
      moveInto(choiceValue(A, "--format", {"table", "json"}, "table"), Format));
  P.Json = Format == "json";
  return P;
}

/// The campaign's kernel Name names, by the rules of a capture's kernels.
Expected<KernelSummary> findKernel(History &H, const std::string &Name) {
  std::vector<EvaluatedCandidate> Evaluations;
  std::vector<KernelSummary> Kernels;
  R3_TRY(moveInto(H.evaluations(), Evaluations));
  R3_TRY(moveInto(summarizeKernels(H, Evaluations), Kernels));
  std::vector<std::string> Names;
  for (const KernelSummary &K : Kernels)
    Names.push_back(K.Kernel.Name);
  uint32_t I = 0;
  R3_TRY(moveInto(
      lookupKernel(kernelNamesOf(Names), Name, H.path(), "the campaign"), I));
  return std::move(Kernels[I]);
}

Error checkBest(const KernelSummary &K, const std::string &History) {
  if (K.Best && K.BestVariant)
    return Error::success();
  std::string Why = K.Evaluations == 0
                        ? "no evaluation yet"
                        : std::to_string(K.Evaluations) +
                              " evaluations, none verified with a time";
  return makeError(History, ": kernel '", K.Kernel.Name,
                   "' has no verified candidate yet (", Why, ")");
}

/// The index of the genome's file ({"file":N,...}); 0 when it has none.
size_t genomeFile(const VariantRow &V) {
  json J = json::parse(V.GenomeJson, nullptr, false);
  return J.is_object() && J.value("file", json()).is_number_unsigned()
             ? J["file"].get<size_t>()
             : 0;
}

bool hasEditedText(const VariantRow &V) {
  json J = json::parse(V.GenomeJson, nullptr, false);
  return J.is_object() && J.contains("text_hash");
}

/// The original source: the text of a variant of file 0 that no operator
/// rewrote (the campaign stored the file as it read it), else the file.
Expected<std::string> originalText(History &H, const BestOf &B) {
  std::vector<VariantRow> Vs;
  R3_TRY(moveInto(H.variants(B.Kernel.Kernel.Id), Vs));
  for (const VariantRow &V : Vs) {
    if (V.SourceHash.empty() || genomeFile(V) != 0 || hasEditedText(V))
      continue;
    std::optional<std::string> Text;
    R3_TRY(moveInto(H.source(V.SourceHash), Text));
    if (Text)
      return *Text;
  }
  if (B.KSpec->Source.empty())
    return std::string();
  return readWholeFile(B.KSpec->Source, "kernel's source file");
}

Expected<BestOf> loadBest(History &H, const ExportPlan &P) {
  BestOf B;
  R3_TRY(moveInto(findKernel(H, P.Kernel), B.Kernel));
  R3_TRY(checkBest(B.Kernel, H.path()));
  std::optional<CampaignRow> Row;
  R3_TRY(moveInto(H.campaign(), Row));
  if (!Row)
    return makeError(H.path(), ": the history holds no campaign file");
  auto C = storedCampaign(*Row, H.path());
  if (!C)
    return makeError("the campaign file stored in ", H.path(),
                     " does not parse here (run r3 export in the campaign's "
                     "folder): ",
                     split(C.error().message(), '\n').front());
  B.Spec = std::move(*C);
  B.KSpec = findKernelSpec(B.Spec, B.Kernel.Kernel.Name);
  if (!B.KSpec)
    return makeError(H.path(), ": the stored campaign file has no kernel '",
                     B.Kernel.Kernel.Name, "'");
  const VariantRow &V = *B.Kernel.BestVariant;
  if (!V.SourceHash.empty()) {
    std::optional<std::string> Text;
    R3_TRY(moveInto(H.source(V.SourceHash), Text));
    if (!Text)
      return makeError(H.path(), ": variant ", V.Id, "'s text (", V.SourceHash,
                       ") is missing from the sources table");
    B.Text = std::move(*Text);
    R3_TRY(moveInto(originalText(H, B), B.Original));
    for (const auto &[Name, Value] : variantKnobs(B.KSpec, V))
      if (isRewriteKnob(Name))
        B.Rewrites[Name] = Value;
    if (!B.Rewrites.empty()) {
      B.Text = resolve(B.Text, B.Rewrites);
      B.Original = resolve(B.Original, {});
    }
  }
  return B;
}

// --- the settings ---

/// The file the variant compiles: the kernel's source, or one of its
/// alternative files.
std::string variantFile(const BestOf &B) {
  size_t F = genomeFile(*B.Kernel.BestVariant);
  const KernelSpec &K = *B.KSpec;
  return F > 0 && F <= K.Files.size() ? K.Files[F - 1] : K.Source;
}

/// The name the source is written under: the kernel's source file's.
std::string sourceName(const BestOf &B) {
  if (!B.KSpec->Source.empty())
    return fs::path(B.KSpec->Source).filename().string();
  return B.Kernel.Kernel.Name + ".c";
}

/// A kernel name as a file name: characters other than letters, digits,
/// '.', '_' and '-' become '_'.
std::string safeName(const std::string &Name) {
  std::string Out = Name;
  for (char &C : Out)
    if (!std::isalnum(static_cast<unsigned char>(C)) && C != '.' && C != '_' &&
        C != '-')
      C = '_';
  return Out;
}

std::string toleranceText(const VerifySettings &V) {
  if (V.Tolerance == ToleranceKind::Exact)
    return "exact";
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%s:%g", toleranceKindName(V.Tolerance),
                V.Value);
  return Buf;
}

json interval(double Lo, double Hi) {
  return Lo > 0 && Hi > 0 ? json::array({Lo, Hi}) : json(nullptr);
}

json optionalNumber(const std::optional<Estimate> &E) {
  return E ? json(E->Value) : json(nullptr);
}

/// Flags as the campaign passed them to clang: its cflags, the source's
/// folder, then the knobs.
void addFlags(json &S, const BestOf &B) {
  json Defines = json::array(), Knobs = json::object();
  for (const auto &[Name, Value] :
       variantKnobs(B.KSpec, *B.Kernel.BestVariant)) {
    if (B.Rewrites.count(Name))
      continue;
    Defines.push_back("-D" + Name + "=" + Value);
    Knobs[Name] = Value;
  }
  S["rewrites"] = B.Rewrites;
  json Includes = json::array(), Flags = json::array();
  if (!B.Text.empty())
    Includes.push_back(fs::path(variantFile(B)).parent_path().string());
  for (const std::string &F : B.KSpec->CFlags)
    Flags.push_back(F);
  for (const json &I : Includes)
    Flags.push_back("-I" + I.get<std::string>());
  for (const json &D : Defines)
    Flags.push_back(D);
  S["knobs"] = Knobs;
  S["defines"] = Defines;
  S["cflags"] = B.KSpec->CFlags;
  S["include_dirs"] = Includes;
  S["flags"] = Flags;
}

void addTiming(json &S, const KernelSummary &K) {
  const EvaluationRow &E = K.Best->Evaluation;
  std::optional<Estimate> Speedup = K.speedup();
  S["median_ms"] = E.MedianMs;
  S["ci_ms"] = interval(E.CiLoMs, E.CiHiMs);
  S["baseline_ms"] = optionalNumber(K.Baseline);
  S["baseline_ci_ms"] =
      K.Baseline ? interval(K.Baseline->Lo, K.Baseline->Hi) : json(nullptr);
  S["speedup"] = optionalNumber(Speedup);
  S["speedup_ci"] =
      Speedup ? interval(Speedup->Lo, Speedup->Hi) : json(nullptr);
}

void addCandidate(json &S, const KernelSummary &K) {
  const CandidateRow &C = K.Best->Candidate;
  const VariantRow &V = *K.BestVariant;
  S["candidate"] = {{"id", C.Id},
                    {"identity", C.Identity},
                    {"level", C.Level},
                    {"operator", C.Operator},
                    {"point", C.Point}};
  S["variant"] = {{"id", V.Id},
                  {"genome_key", V.GenomeKey},
                  {"operator", V.Operator},
                  {"island", V.Island}};
}

void addRunSettings(json &S, const BestOf &B) {
  const EvaluatedCandidate &E = *B.Kernel.Best;
  json Recorded = json::parse(E.Candidate.SettingsJson, nullptr, false);
  if (!Recorded.is_object())
    Recorded = json::object();
  S["pipeline"] = E.Evaluation.Result.Pipeline;
  S["codegen_opt"] = E.Evaluation.Result.CodegenOpt;
  if (Recorded.contains("block"))
    S["block"] = Recorded["block"];
  const VerifySettings &V = B.KSpec->Verify;
  S["verify"] = {{"tolerance", toleranceText(V)},
                 {"dtype", V.Type == ElementType::Bytes
                               ? json(nullptr)
                               : json(elementTypeName(V.Type))}};
  const EvaluationSpec &Ev = B.Spec.Evaluation;
  S["evaluation"] = {{"warmup", Ev.Warmup},
                     {"repetitions", Ev.Repetitions},
                     {"timeout_s", Ev.TimeoutSeconds}};
  S["settings"] = Recorded;
}

/// What the capture recorded about the kernel that identifies it in the
/// application: its mangled name and the SHA-256 of its module's image,
/// which `r3 run --use` checks the application's kernel against.
struct RecordedIdentity {
  std::string Mangled, ModuleSha256;
};

Expected<RecordedIdentity> recordedIdentity(const KernelSpec &K) {
  std::unique_ptr<CaptureReader> R;
  R3_TRY(moveInto(CaptureReader::open(K.Capture), R));
  uint32_t Index = 0;
  R3_TRY(moveInto(findKernel(*R, K.Name), Index));
  std::vector<uint8_t> Image;
  R3_TRY(moveInto(R->readModule(R->kernels()[Index].Module), Image));
  return RecordedIdentity{
      R->kernels()[Index].Name,
      sha256Hex(std::string_view(reinterpret_cast<const char *>(Image.data()),
                                 Image.size()))};
}

json settingsOf(const BestOf &B, const std::string &Diff,
                const std::string &History) {
  bool Recorded = B.Text.empty();
  json S = json::object();
  S["kernel"] = B.Kernel.Kernel.Name;
  S["backend"] = B.Spec.Target == Backend::Cuda ? "cuda" : "host";
  S["capture"] = B.KSpec->Capture;
  S["source"] = Recorded ? json(nullptr) : json(sourceName(B));
  S["recorded"] = Recorded;
  S["original_source"] =
      B.KSpec->Source.empty() ? json(nullptr) : json(B.KSpec->Source);
  S["source_changed"] = !Recorded && B.Text != B.Original;
  S["diff"] = Diff.empty() ? json(nullptr) : json(Diff);
  addFlags(S, B);
  addRunSettings(S, B);
  addTiming(S, B.Kernel);
  addCandidate(S, B.Kernel);
  S["history"] = fs::absolute(History).lexically_normal().string();
  S["r3_version"] = Version;
  return S;
}

// --- TOML ---

/// A key as TOML writes it: bare when it can be, else quoted.
std::string tomlKey(const std::string &K) {
  bool Bare = !K.empty();
  for (char C : K)
    Bare &= std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '-';
  return Bare ? K : json(K).dump();
}

/// A JSON value in TOML: strings, numbers and booleans are written alike;
/// arrays and objects inline. Null has no TOML form: callers leave it out.
std::string tomlValue(const json &V) {
  if (V.is_array()) {
    std::vector<std::string> Parts;
    for (const json &E : V)
      if (!E.is_null())
        Parts.push_back(tomlValue(E));
    return "[" + join(Parts, ", ") + "]";
  }
  if (V.is_object()) {
    std::vector<std::string> Parts;
    for (const auto &[K, E] : V.items())
      if (!E.is_null())
        Parts.push_back(tomlKey(K) + " = " + tomlValue(E));
    return "{" + join(Parts, ", ") + "}";
  }
  return V.dump(); // a JSON string, number or boolean is valid TOML
}

/// Top-level values first, then each object as a [table] (TOML's order).
std::string toToml(const json &S, const std::string &Header) {
  std::string Top = Header, Tables;
  for (const auto &[K, V] : S.items()) {
    if (V.is_null())
      continue;
    if (!V.is_object()) {
      Top += tomlKey(K) + " = " + tomlValue(V) + "\n";
      continue;
    }
    Tables += "\n[" + tomlKey(K) + "]\n";
    for (const auto &[K2, V2] : V.items())
      if (!V2.is_null())
        Tables += tomlKey(K2) + " = " + tomlValue(V2) + "\n";
  }
  return Top + Tables;
}

// --- writing ---

#ifdef R3_HAVE_CUDA
/// The best's cubin and PTX, and the replay command that evaluates it.
Error addCuda(ExportSet &Out, const BestOf &B, const std::string &Dir) {
  CudaExportInput In;
  In.Capture = B.KSpec->Capture;
  In.KernelName = B.Kernel.Kernel.Name;
  const json &Rule = Out.Settings["grid_rule"];
  In.GridRule = Rule.is_string() ? Rule.get<std::string>() : "";
  In.SourceText = B.Text;
  In.SourceName = B.Text.empty() ? "" : sourceName(B);
  In.Dir = fs::absolute(Dir).lexically_normal().string();
  for (const json &F : Out.Settings["flags"])
    In.Flags.push_back(F.get<std::string>());
  In.Settings = Out.Settings["settings"];
  R3_TRY(moveInto(readSettingsJson(nlohmann::json(In.Settings)), In.Compiler));
  CudaExportFiles Files;
  R3_TRY(moveInto(exportCudaCode(In), Files));
  for (auto &F : Files.Files) {
    Out.Settings["files"].push_back(F.first);
    Out.Files.push_back(std::move(F));
  }
  Out.Settings["replay_command"] = Files.ReplayCommand;
  return Error::success();
}
#endif

Expected<ExportSet> exportSet(const BestOf &B, const std::string &History,
                              const std::string &Dir) {
  ExportSet Out;
  std::string Name = sourceName(B), Diff;
  if (!B.Text.empty()) {
    Out.Files.push_back({Name, B.Text});
    std::string D = unifiedDiff(B.Original, B.Text, "a/" + Name, "b/" + Name);
    if (!D.empty()) {
      Diff = safeName(B.Kernel.Kernel.Name) + ".diff";
      Out.Files.push_back({Diff, D});
    }
  }
  Out.Settings = settingsOf(B, Diff, History);
  // Null when the capture is gone: r3 run then refuses to apply it.
  auto Identity = recordedIdentity(*B.KSpec);
  Out.Settings["mangled_name"] =
      Identity ? json(Identity->Mangled) : json(nullptr);
  Out.Settings["module_sha256"] =
      Identity ? json(Identity->ModuleSha256) : json(nullptr);
  // The rule the best ran with: a coarsened variant's, where its block
  // gave its grid (SearchState::settingsOf), else the campaign's.
  const json &Run = Out.Settings["settings"];
  auto Stride = B.Rewrites.find(GridStrideKnob);
  bool Block = Run.is_object() && Run.contains("block");
  std::string Rule = gridRuleFor(
      B.KSpec->GridRule,
      Block && Stride != B.Rewrites.end() ? gridStrideElements(Stride->second)
                                          : 0,
      Run.is_object() &&
          (Run.contains("grid_x") || Run.contains("grid_per_sm")));
  Out.Settings["grid_rule"] = Rule.empty() ? json(nullptr) : json(Rule);
  if (B.Spec.Target == Backend::Cuda) {
    Out.Settings["files"] = json::array();
#ifdef R3_HAVE_CUDA
    R3_TRY(addCuda(Out, B, Dir));
#else
    return Error::make("exporting a CUDA campaign's cubin needs r3 built "
                       "with the CUDA backend");
#endif
  }
  std::string Header =
      "# r3 export of kernel " + B.Kernel.Kernel.Name + ", candidate " +
      std::to_string(B.Kernel.Best->Candidate.Id) +
      ". The keys are described in r3's docs/export.md; settings.json "
      "holds the same\n# (with null where a value is unknown, which this "
      "file leaves out).\n";
  Out.Files.push_back({"settings.toml", toToml(Out.Settings, Header)});
  Out.Files.push_back({"settings.json", Out.Settings.dump(2) + "\n"});
  return Out;
}

Error writeSet(const ExportSet &S, const ExportPlan &P) {
  std::error_code EC;
  if (pathExists(P.Dir) && !fs::is_directory(P.Dir))
    return makeError(P.Dir, ": not a folder (-o names the folder to write)");
  fs::create_directories(P.Dir, EC);
  if (EC || !fs::is_directory(P.Dir))
    return makeError(P.Dir, ": cannot create the folder",
                     EC ? ": " + EC.message() : std::string());
  std::vector<std::string> Existing;
  for (const auto &[Name, Text] : S.Files)
    if (pathExists((fs::path(P.Dir) / Name).string()))
      Existing.push_back(Name);
  if (!Existing.empty() && !P.Force)
    return makeError(P.Dir, ": would overwrite ", join(Existing, ", "),
                     " (--force replaces them)");
  for (const auto &[Name, Text] : S.Files)
    R3_TRY(writeFileAtomically((fs::path(P.Dir) / Name).string(), Text));
  return Error::success();
}

void printSet(const ExportSet &S, const ExportPlan &P) {
  if (P.Json) {
    json Files = json::array();
    for (const auto &[Name, Text] : S.Files)
      Files.push_back((fs::path(P.Dir) / Name).string());
    json Out = {
        {"directory", P.Dir}, {"files", Files}, {"settings", S.Settings}};
    std::printf("%s\n", Out.dump(2).c_str());
    return;
  }
  const json &J = S.Settings;
  std::printf("r3: exported kernel %s, candidate %lld (%s, %s over the "
              "baseline), to %s:\n",
              J["kernel"].get<std::string>().c_str(),
              J["candidate"]["id"].get<long long>(),
              formatMs(J["median_ms"].get<double>()).c_str(),
              formatSpeedup(J["speedup"].is_number()
                                ? std::optional(J["speedup"].get<double>())
                                : std::nullopt)
                  .c_str(),
              P.Dir.c_str());
  for (const auto &[Name, Text] : S.Files)
    std::printf("  %s\n", Name.c_str());
  if (J.contains("replay_command"))
    std::printf("replay it: %s\n",
                J["replay_command"].get<std::string>().c_str());
  if (J["recorded"].get<bool>())
    std::printf("  (the best is the recorded code: no source to write)\n");
  else if (!J["source_changed"].get<bool>())
    std::printf("  (its text is the original source's: no diff; the knobs "
                "are in the settings)\n");
}

} // namespace

Expected<nlohmann::ordered_json>
exportBest(History &H, const std::string &Kernel, const std::string &Dir) {
  ExportPlan P{H.path(), Kernel, Dir, /*Force=*/true, false};
  BestOf B;
  R3_TRY(moveInto(loadBest(H, P), B));
  ExportSet S;
  R3_TRY(moveInto(exportSet(B, H.path(), Dir), S));
  R3_TRY(writeSet(S, P));
  return S.Settings;
}

namespace {
int runExport(const ParsedArgs &A) {
  auto P = parsePlan(A);
  if (!P)
    return usageError(P.error().message(), "export");
  auto H = History::open(P->History, HistoryMode::ReadOnly);
  if (!H)
    return fail(H.error());
  auto B = loadBest(**H, *P);
  if (!B)
    return fail(B.error());
  auto S = exportSet(*B, (*H)->path(), P->Dir);
  if (!S)
    return fail(S.error());
  if (Error E = writeSet(*S, *P))
    return fail(E);
  printSet(*S, *P);
  return ExitSuccess;
}
} // namespace

CommandSpec exportCommand() {
  return {"export",
          "write a kernel's best source, diff and settings to a directory",
          "HISTORY.db --kernel NAME -o DIR [--force] [--format table|json]",
          "Writes the kernel's best verified candidate (the one r3 report\n"
          "shows) into DIR, created if missing: its source text under the\n"
          "name of the kernel's source file, NAME.diff (a unified diff\n"
          "against the original source, when the text differs), and\n"
          "settings.toml and settings.json: the flags it was compiled with\n"
          "(cflags, include folder, knob defines), pipeline, codegen level,\n"
          "launch settings, its time, the baseline and the speedup.\n"
          "Existing files are kept unless --force is given. Run it where the\n"
          "campaign's files are found (its folder). docs/export.md lists the\n"
          "keys.",
          {{"--kernel", "", Arity::Value, "NAME", "the kernel to export"},
           {"--output", "-o", Arity::Value, "DIR", "the directory to write"},
           {"--force", "", Arity::Flag, "", "replace files DIR already has"},
           {"--format", "", Arity::Value, "table|json",
            "what to print about the files written (default table)"}},
          false,
          runExport};
}

} // namespace r3::cli
