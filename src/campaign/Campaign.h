// The campaign file: what `r3 tune` reads. A TOML file (reference:
// share/campaign.toml) naming the database, the backend, the kernels (capture,
// launches, source, flags, verification), the budget, the search space of
// each level (source knobs and files; compiler; launch) with the strategy of
// each level, and the evaluation settings. loadCampaign validates all of it
// and reports every mistake at once, each as "FILE:LINE:COL: what was
// expected, what was got", with "did you mean" for misspelt keys.
#pragma once

#include "capture/Capture.h"
#include "compile/CompileSettings.h"
#include "replay/Candidate.h"
#include "search/Space.h"
#include "search/evolve/Evolution.h"
#include "support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3 {

class CaptureReader;

/// One kernel to tune.
struct KernelSpec {
  std::string Name;    ///< as in the capture (any name KernelLookup.h takes)
  std::string Capture; ///< absolute (resolved against the file's folder)
  /// The kernel's launch ordinals (launch N: its (N+1)-th launch in the
  /// application, as r3 inspect numbers it); empty: every recorded launch.
  std::vector<uint32_t> Launches;
  std::string Source;             ///< absolute; empty: only the recorded code
  std::vector<std::string> Files; ///< alternative sources (absolute)
  std::vector<std::string> CFlags;
  std::string CompileCommands; ///< absolute; empty: none
  /// CUDA: how the grid follows a block change, in LaunchRule.h's syntax
  /// (launchRuleText of the file's "keep_threads", "keep_grid", an
  /// expression for x such as "ceil(arg3 / block_x)", or "x=...;y=...");
  /// empty: keep-threads.
  std::string GridRule;
  /// CUDA: whether the kernel loops over its data in grid strides, so that
  /// any grid computes the same (the launch level's grid_x and grid_per_sm
  /// apply to it); none: recognised from its source (a loop that reads
  /// gridDim), false without one.
  std::optional<bool> GridStride;
  /// Compile the kernel alone (compile/KernelAlone.h): its source without
  /// the functions it does not reach, checked by clang first.
  bool Extract = false;
  VerifySettings Verify;
  std::vector<search::KnobDomain> Knobs; ///< source knobs (defines)
  /// The kernel's share of the application's run (0 to 1], as `r3 profile`
  /// measured it; none when the campaign does not say. Turns the kernel's
  /// speedup into an end-to-end one (report/Amdahl.h).
  std::optional<double> Share;
};

struct BudgetSpec {
  uint64_t Evaluations = 100; ///< candidates evaluated, over all kernels
  double WallSeconds = 0;     ///< 0: no limit
  std::optional<double> TargetSpeedup; ///< stop a kernel once reached
  /// Evaluations each source variant's inner loop gets.
  unsigned InnerEvaluations = 10;
};

/// The compiler level's domains. Empty lists mean "the recorded setting".
struct CompilerSpec {
  std::vector<std::string> Toolchains;   ///< "llvm", "nvrtc" (cuda)
  std::vector<std::string> Pipelines;    ///< base pipelines: "default<O3>"
  std::string PassList;                  ///< absolute path of the pass list
  std::vector<std::string> Passes;       ///< the pass list's entries
  unsigned MaxPasses = 0;                ///< extra passes appended; 0: none
  std::vector<int> CodegenOpt;           ///< 0..3
  std::vector<int> MaxRegisters;         ///< cuda; 0: no limit
  std::vector<bool> FastMath;            ///< cuda
  std::vector<std::string> LaunchBounds; ///< cuda: "T" or "T,B"
  std::vector<std::string> Specialize;   ///< cuda: "none", "args", "dims"
  /// cuda, nvcc toolchain: option strings, each one choice ("" for none,
  /// "--extra-device-vectorization", "-Xptxas -dlcm=cg").
  std::vector<std::string> NvccOptions;
  std::string Strategy = "portfolio";
};

struct LaunchSpec {
  std::vector<uint32_t> BlockX, BlockY, BlockZ; ///< cuda
  std::vector<uint32_t> DynamicShared;          ///< cuda, bytes
  /// cuda, grid-stride kernels only: the grid in x, in blocks or in blocks
  /// per multiprocessor of the device that runs it; 0: as recorded.
  std::vector<uint32_t> GridX, GridPerSm;
  std::vector<std::string> CachePreference; ///< "none", "shared", "l1", "equal"
};

struct SourceSpec {
  std::string Strategy = "map-elites";
  unsigned Islands = 2;
  unsigned MigrationInterval = 10;
  /// Behaviour descriptors; default registers and shared_bytes (cuda) or the
  /// first two knobs (host).
  std::vector<search::DescriptorAxis> Descriptors;
  /// Operator name -> rate ("knob", "crossover", "llm").
  std::vector<std::pair<std::string, double>> Operators;
};

/// One model of the LLM operator and its share of the calls.
struct LlmModelSpec {
  std::string Name;
  double Weight = 1;
};

/// The [llm] section: where the LLM operator sends its calls.
struct LlmSpec {
  bool Given = false;   ///< the campaign has an [llm] section
  std::string Endpoint; ///< "http://127.0.0.1:8000/v1"
  std::vector<LlmModelSpec> Models;
  /// The name of the environment variable holding the API key (never the
  /// key); empty: no key (local servers).
  std::string ApiKeyEnv;
  double Temperature = 0.8;
  unsigned MaxTokens = 4096;
  unsigned Concurrency = 2;
  double TimeoutSeconds = 120;
  unsigned Retries = 3;
  double BackoffSeconds = 1;
  uint64_t MaxCalls = 0, MaxTotalTokens = 0; ///< 0: no limit
  std::string Prompts; ///< the templates' folder (absolute)
  unsigned FailuresInPrompt = 3;
};

struct EvaluationSpec {
  uint32_t Warmup = 2;
  uint32_t Repetitions = 20;    ///< the most timed runs
  uint32_t MinRepetitions = 6;  ///< the fewest; = Repetitions: no early stop
  double TargetCi = 0.01;       ///< stop when the median's CI is this narrow
  double TimeoutSeconds = 10;
  bool FlushL2 = false;
  /// Evaluations per worker between re-measurements of the baseline.
  unsigned BaselineInterval = 50;
  /// cuda: runs of the recorded code before the campaign, whose outputs
  /// must equal the recording within the kernel's tolerance; 0: no check.
  uint32_t DeterminismRuns = 5;
};

struct Campaign {
  std::string Path;     ///< the campaign file as given
  std::string Dir;      ///< its folder (absolute)
  std::string Text;     ///< the file's text, stored in the history
  std::string Database; ///< absolute
  /// Captures named but not there yet, as written (loadCampaign's
  /// MissingCapturesOk; empty otherwise).
  std::vector<std::string> MissingCaptures;
  Backend Target = Backend::Host;
  uint64_t Seed = 1;
  unsigned Workers = 0; ///< 0: the default (one per GPU / spare core)
  /// cuda: the GPUs workers use, as CUDA_VISIBLE_DEVICES names them (worker
  /// W gets Gpus[W % size]); empty: the visible ones.
  std::vector<std::string> Gpus;
  std::vector<KernelSpec> Kernels;
  BudgetSpec Budget;
  SourceSpec Source;
  CompilerSpec Compiler;
  LaunchSpec Launch;
  EvaluationSpec Evaluation;
  LlmSpec Llm;
};

/// The capture indices of the launches a [[kernel]] is evaluated on: those
/// its `launches` name, in that order, or every recorded launch of kernel K
/// (the capture's kernel the section names, from findKernel).
Expected<std::vector<uint32_t>>
kernelLaunches(const CaptureReader &R, uint32_t K, const KernelSpec &Spec);

/// A campaign's grid_rule in the syntax of LaunchRule.h.
std::string launchRuleText(const std::string &CampaignRule);

/// Reads and validates a campaign file. The error holds every mistake, one
/// per line, each "PATH:LINE:COL: message". With MissingCapturesOk, a
/// capture that does not exist yet is listed in Campaign::MissingCaptures
/// instead (a dry run before the recipe has recorded it).
Expected<Campaign> loadCampaign(const std::string &Path,
                                bool MissingCapturesOk = false);
/// The same from text (Path only names it in messages and resolves relative
/// paths against its folder).
Expected<Campaign> parseCampaign(const std::string &Text,
                                 const std::string &Path,
                                 bool MissingCapturesOk = false);

/// The inner loop's space (compiler × launch) of a campaign: one parameter
/// per domain with more than one value, in a fixed order; names are the
/// campaign keys ("pipeline", "passes", "codegen_opt", "block_x", ...).
search::Space innerSpace(const Campaign &C);
/// The launch level of the inner space alone (block, dynamic shared memory,
/// cache preference): what varies for a recorded cubin.
search::Space launchSpace(const Campaign &C);
/// The outer loop's space of one kernel.
search::SourceSpaceModel sourceSpace(const KernelSpec &K);

/// The settings of an inner-space point, applied to a candidate: the
/// compiler's (pipeline text with base and extra passes joined, codegen
/// level, and CUDA's toolchain, registers, ...) and the launch overrides.
struct InnerSettings {
  CompileSettings Compiler;
  std::optional<Dim3> Block;
  /// Grid-stride kernels: blocks in x, or blocks per multiprocessor; 0: as
  /// the recording and the grid rule give it.
  uint32_t GridX = 0, GridPerSm = 0;
  std::string CachePreference; ///< cuda; empty: the recorded
  uint32_t DynamicShared = 0;  ///< cuda, bytes
};
InnerSettings innerSettings(const Campaign &C, const search::Space &S,
                            const search::Point &P);

/// The API key of the campaign's [llm] section, read from the variable its
/// api_key_env names (empty when it names none); an error when that variable
/// is not set. The key is only ever handed to the LLM client.
Expected<std::string> llmApiKey(const Campaign &C);

/// The lines `r3 tune --dry-run` prints: per level, its parameters, their
/// domain sizes and the level's size.
std::vector<std::string> describeSpaces(const Campaign &C);

} // namespace r3
