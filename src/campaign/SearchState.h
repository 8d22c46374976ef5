// The search state of a campaign (internal to src/campaign): per kernel, its
// baseline, its source variants and their inner-loop strategies; the
// candidates in flight; the history it commits to. SearchState.cpp builds
// and applies (new candidates, results, a resume), SearchStateJobs.cpp
// makes the workers' jobs, SearchStateLlm.cpp runs the LLM operator's
// session; the event loop (EventLoop.h) drives it, and only it includes this
// header.
#pragma once

#include "campaign/Campaign.h"
#include "campaign/EventLoop.h"
#include "history/History.h"
#include "campaign/WorkerProtocol.h"
#include "compile/Rewrite.h"
#include "replay/Speedup.h"
#include "search/Strategy.h"
#include "search/evolve/Evolution.h"
#include "search/llm/LlmOperator.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace r3 {

class CaptureReader;

/// One source variant of a kernel and its inner loop.
/// Failed evaluations in a row after which a variant that never verified is
/// retired (VariantState::FailuresInRow).
inline constexpr unsigned RetireAfterFailures = 4;

struct VariantState {
  int64_t Id = 0;
  bool Recorded = false; ///< the recorded code (no source)
  search::SourceGenome Genome;
  /// Its inner loop's space: the campaign's compiler x launch space, or the
  /// launch level alone for a recorded cubin, which nothing recompiles.
  const search::Space *Space = nullptr;
  std::string Text, SourceHash, Operator;
  std::vector<int64_t> Parents;
  unsigned Island = 0;
  std::unique_ptr<search::Strategy> Inner;
  unsigned Budget = 0, Issued = 0, Done = 0;
  bool Exhausted = false; ///< its strategy has nothing more to propose
  /// Points its strategy proposed in one batch for the idle slots of this
  /// dispatch round, not yet made candidates (pending in the strategy).
  std::deque<search::Point> Proposed;
  std::optional<int64_t> SourceCandidate; ///< default settings
  bool SourceDone = false, Dead = false, Reported = false;
  /// Its evaluations that failed since its last verified one. Whether a
  /// variant verifies can depend on the compiler (FMA contraction, fast
  /// math, the order of float atomics), so a wrong result under its default
  /// settings (or a compile error, when the campaign has another toolchain)
  /// does not end it: it is retired once RetireAfterFailures of its
  /// evaluations in a row have failed without any ever verifying. A crash
  /// or a hang under its default settings ends it at once, as before.
  unsigned FailuresInRow = 0;
  std::optional<double> BestMs;
  std::optional<int64_t> BestCandidate;
  std::vector<double> Descriptor;
  std::string CompileReport; ///< of its source-level evaluation, for prompts
};

/// A failed child, told to the LLM in the next prompts of its lineage.
struct LineageFailure {
  std::vector<int64_t> Parents; ///< of the child that failed
  std::string Kind, Message;    ///< "compile_error", "llm_invalid", ...
};

struct KernelState {
  const KernelSpec *Spec = nullptr;
  int64_t Id = 0;
  std::string Mangled, Fingerprint;
  /// What its candidates run on, for their identities: the capture's GPU
  /// and architecture (cuda), this CPU (host).
  std::string Device;
  std::vector<uint32_t> Launches; ///< capture launch indices
  search::SourceSpaceModel Model;
  std::unique_ptr<search::Evolution> Evo;
  std::deque<VariantState> Variants;
  /// Its baselines by device and its verified times, by the rule `r3
  /// report` applies (replay/Speedup.h): the best, the baseline it is
  /// compared with and the speedup are the report's, and the search's
  /// single scale (scale(), referenceBaselineMs()) comes from the same
  /// per-device baselines.
  report::KernelTimes Times;
  uint64_t Evaluations = 0, Failures = 0;
  /// Its best time over its baseline after each evaluation (KernelBudget.h).
  std::vector<double> Remaining;
  uint64_t InFlight = 0; ///< jobs issued whose results have not come
  std::map<std::string, std::string> FileTexts;
  llm::LlmOperator *Llm = nullptr; ///< owned by Evo
  std::unique_ptr<llm::LlmContext> LlmFacts;
  std::vector<LineageFailure> LineageFailures;
  std::string LaunchFacts; ///< the recorded launch, described for prompts
  /// Any grid computes the same (KernelSpec::GridStride): the launch
  /// level's grid_x and grid_per_sm apply.
  bool GridStride = false;
  Dim3 RecordedGrid = {1, 1, 1}; ///< its first launch's
  Dim3 RecordedBlock = {1, 1, 1};
  int ComputeMajor = 0; ///< the capture's GPU; 0 on the host backend
  std::string LimitFacts; ///< limitsFacts of its first launch
  /// The rewrite operator's knobs (Rewrite.h) and what each is, for prompts.
  std::map<std::string, std::string> RewriteSites;
  std::set<std::string> LlmDeclines; ///< reasons already told

  /// The baseline on the reference device (the first to measure one): the
  /// scale the search compares times on, which VariantState::BestMs and
  /// the prompts' figures use.
  std::optional<double> baselineMs() const;
  /// What a time measured on Device is multiplied by to compare it with
  /// times from other devices (KernelTimes::scale): the reference device's
  /// baseline over Device's, so that the search ranks each candidate by its
  /// speedup over its own device's baseline (GPUs of different kinds, or
  /// clocks, across the ranks of a job). 1 on the reference device, and on
  /// a device that has not measured the baseline yet.
  double deviceScale(const std::string &Device) const;
  /// Variants whose inner loop has not ended.
  unsigned openVariants() const;
  bool targetReached(const std::optional<double> &Target) const;
};

/// A job sent to a worker, with what its result updates.
struct InFlight {
  uint64_t JobId = 0;
  unsigned Worker = 0;
  KernelState *Kernel = nullptr;
  VariantState *Variant = nullptr;    ///< null for a baseline re-measure
  std::optional<int64_t> Candidate;   ///< none for a baseline re-measure
  std::optional<search::Point> Point; ///< inner candidates
  std::string Level;
  WorkerJob Job;
};

/// A candidate the next free worker takes (resume, a dead worker's jobs).
struct Requeued {
  KernelState *Kernel = nullptr;
  VariantState *Variant = nullptr;
  CandidateRow Row;
  std::optional<search::Point> Point;
};

class SearchState {
public:
  SearchState(const Campaign &C, History &H, unsigned Workers);
  /// Registers the kernels and rebuilds the state from the history; true when
  /// the history already held results.
  Expected<bool> load();

  /// Starts a dispatch round that will fill up to Idle job slots: inner
  /// strategies propose their points in batches of that size (one model
  /// fit a batch, the batch chosen together), and the previous round's
  /// unused proposals are dropped, so that no proposal outlives the results
  /// that arrived since.
  void beginRound(unsigned Idle);
  /// The next job for worker W, or none when nothing can be dispatched now.
  Expected<std::optional<InFlight>> next(unsigned W);
  /// Applies a result (live: also written to the history).
  Error apply(InFlight &F, const WorkerResult &R, unsigned WorkerIndex,
              const std::string &Device);
  /// Gives a job back (its worker died): it is dispatched again.
  void giveBack(InFlight &F);
  /// Why the campaign is over, or none while there is work.
  std::optional<std::string> finished(size_t InFlightCount) const;

  TuneProgress progress() const;
  uint64_t committed() const { return Committed; }
  std::vector<std::string> takeNotes();
  /// Whether source variants are being made (LLM calls in flight): the
  /// campaign is not over while they are.
  bool waiting() const;
  /// Keeps LLM calls in flight while the workers evaluate: asks for
  /// children while the client has room and queues those that arrived.
  Error pumpLlm();
  /// Ends the LLM calls in flight and records them (the campaign is over).
  Error closeLlm();

  /// The facts a prompt gives about Parent (SearchStateLlm.cpp).
  Expected<llm::ParentFacts> describeParent(KernelState &K,
                                            const search::Elite &Parent);

private:
  Error loadKernel(const KernelSpec &K);
  /// What clang's AST of K's own source gives (Rewrite.h): with Rewrite,
  /// the rewrite operator's knobs, appended to K.Model with the file's text
  /// instrumented; with Grid, whether K strides over its grid. Events in
  /// the history say what was found, or why nothing was.
  Error analyzeSource(KernelState &K, const CaptureReader &R, uint32_t Kernel,
                      bool Rewrite, bool Grid);
  /// K's source file as the kernel alone (KernelAlone.h), when clang
  /// compiles that; an event says what was kept and dropped, or why the
  /// file stays whole.
  Error extractKernel(KernelState &K, const CaptureReader &R, uint32_t Kernel);
  /// clang's command line (no action) for Path, read as K's source file.
  Expected<std::vector<std::string>>
  syntaxArgv(const KernelState &K, const CaptureReader &R,
             const std::string &Path) const;
  Error rebuild(KernelState &K);
  Error applyEvaluation(KernelState &K, VariantState &V,
                        const std::string &Level,
                        const std::optional<search::Point> &P,
                        int64_t CandidateId, const EvaluationRow &E);
  Expected<std::optional<InFlight>> requeued();
  VariantState &addVariantState(KernelState &K, VariantRow Row,
                                search::SourceGenome G);
  Expected<std::optional<InFlight>> innerJob(KernelState &K);
  Expected<std::optional<InFlight>> newVariantJob(KernelState &K);
  /// The children the outer loop has ready, after asking it for one more
  /// when Ask and the LLM client has room.
  std::vector<search::Offspring> takeChildren(KernelState &K, bool Ask);
  /// The history's variants of new children (repeats of a stored genome
  /// are skipped), with the LLM calls that made them recorded.
  Expected<std::vector<VariantState *>>
  addVariants(KernelState &K, std::vector<search::Offspring> &Kids);
  Expected<std::optional<InFlight>> baselineJob(KernelState &K, unsigned W);
  Expected<std::optional<InFlight>>
  candidateJob(KernelState &K, VariantState &V, const std::string &Level,
               const std::string &Operator, std::optional<int64_t> Parent,
               std::optional<search::Point> P);
  /// A candidate's settings: the point's (none: the defaults), as the
  /// kernel and the variant can run them (the grid only where they stride
  /// over it; a coarsened variant's block, which its grid follows).
  InnerSettings settingsOf(const KernelState &K, const VariantState &V,
                           const std::optional<search::Point> &P) const;
  WorkerJob makeJob(const KernelState &K, const VariantState &V,
                    const InnerSettings &S) const;
  std::string settingsJson(const InnerSettings &S) const;
  void reportVariant(KernelState &K, VariantState &V);
  Error saveArchive(KernelState &K);
  std::unique_ptr<search::Strategy> makeInner(unsigned Salt,
                                              const search::Space &S) const;
  /// The kernel's source as written (the first file, every knob at its
  /// first value), compiled by the campaign's toolchains: a labelled point
  /// of its own on the CUDA backend, made before any other variant.
  Error seedInitial(KernelState &K);
  bool budgetLeft() const;
  // SearchStateLlm.cpp: the LLM operator's session and its records.
  Error startLlm();
  void attachLlm(KernelState &K, double Rate);
  void noteLlmStop(KernelState &K);
  Error recordLlmCalls(KernelState &K,
                       const std::map<uint64_t, int64_t> &TagToVariant);
  Error rebuildLlm(KernelState &K);
  void noteFailure(KernelState &K, const VariantState &V,
                   const CandidateResult &R);
  std::string failuresFor(const KernelState &K, int64_t Parent) const;
  std::string bestFacts(const KernelState &K, int64_t Parent) const;

  const Campaign &C;
  History &H;
  search::Space Inner, LaunchOnly;
  std::string Evaluation;
  std::deque<KernelState> Kernels;
  std::deque<Requeued> Queue;
  std::map<unsigned, uint64_t> SinceBaseline; ///< per worker
  uint64_t Committed = 0, CommittedAtStart = 0, Issued = 0, NextJob = 1;
  unsigned Workers = 1;
  unsigned RoundLeft = 1; ///< slots this dispatch round may still fill
  size_t NextKernel = 0;
  /// The order kernels are offered the next evaluation: by expected
  /// end-to-end gain when every kernel has a share (KernelBudget.h), those
  /// whose recorded code has not been evaluated first; else in turns from
  /// NextKernel.
  std::vector<size_t> kernelTurns() const;
  std::vector<std::string> Notes;
  double Started = 0;
  std::unique_ptr<llm::LlmSession> Llm;
  bool LlmStopNoted = false;
};

/// The recorded launch for a prompt: parameters, and regions read or
/// written (SearchStateLlm.cpp).
std::string describeLaunch(const KernelInfo &K, const LaunchInfo &L);

/// The compile flags of a kernel's source file: the campaign's cflags, the
/// build's (compile_commands.json) and the file's folder.
std::vector<std::string> sourceFlags(const KernelSpec &Spec,
                                     const std::string &File);

/// What the recorded launch says about each parameter of kernel K: which
/// recorded region a pointer points into and whether the launch wrote it
/// (SearchStateRewrite.cpp).
std::vector<ParamFact> paramFacts(const KernelInfo &K, const LaunchInfo &L);

/// Where the recorded launch stands against the device's limits, for
/// prompts: the bytes its pointers reach and the launch changed, its time in
/// the application and the bandwidth that implies beside the GPU's peak
/// (where r3 knows the GPU); empty when there is nothing to say.
std::string limitsFacts(const KernelInfo &K, const LaunchInfo &L,
                        const DeviceInfo &D);

/// Blocks of Threads threads a multiprocessor of compute capability Major
/// can hold at Registers registers a thread and SharedBytes a block, and
/// the occupancy that is: "at most 6 blocks of 256 threads an SM (75%
/// occupancy, limited by registers)"; empty where Major is not known.
std::string occupancyText(int64_t Registers, int64_t SharedBytes,
                          uint32_t Threads, int Major);

/// [[2],[0,5]]: the indices of a point, as stored in the history.
std::string pointJson(const search::Point &P);
Expected<search::Point> parsePointJson(const std::string &Text);

} // namespace r3
