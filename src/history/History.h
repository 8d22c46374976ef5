// The history of a campaign: one SQLite file (WAL) holding the campaign, its
// kernels, every source variant, every candidate (identity hash UNIQUE, so
// nothing is evaluated twice), every evaluation, the baseline measurements
// and the MAP-Elites archive. It is also the checkpoint: a campaign resumes
// from it alone. The schema carries `PRAGMA user_version` and is migrated
// forward on open; docs/history-schema.md documents it for sqlite3 users.
//
// This is the only file that calls SQLite (one wrapper per C API, so that
// every SQLite error reads the same and one place owns its quirks); SQLite's
// own error text becomes the error message, prefixed with the database's
// path.
#pragma once

#include "replay/Candidate.h"
#include "support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
namespace r3::detail {
class StatementCache;
}

namespace r3 {

/// The schema version this build writes (PRAGMA user_version).
inline constexpr int HistorySchemaVersion = 6;

enum class HistoryMode {
  Create,  ///< create the file (an error if it exists)
  Open,    ///< open an existing file read-write, migrating it
  ReadOnly ///< open an existing file for reading (r3 status, r3 report)
};

struct CampaignRow {
  std::string Path, Text, Backend; ///< Backend: "host" or "cuda"
  uint64_t Seed = 0;
  double Created = 0; ///< seconds since the epoch
  std::string State;  ///< "running", "interrupted", "complete"
};

struct KernelRow {
  int64_t Id = 0;
  std::string Name, Capture, CaptureHash;
};

/// A source variant of a kernel (the outer loop's individual).
struct VariantRow {
  int64_t Id = 0, KernelId = 0;
  std::string GenomeKey;          ///< SourceGenome::key, UNIQUE per kernel
  std::string GenomeJson;         ///< {"file":0,"knobs":[1,2],"text_hash":...}
  std::string SourceHash;         ///< of the source text (sources table); "" =
                                  ///< the recorded code
  std::string ParentsJson = "[]"; ///< variant ids
  std::string Operator;           ///< "original", "knob", "crossover", ...
  int64_t Island = 0;
  double Created = 0;
};

enum class CandidateState { Queued, Running, Done, Dropped };
const char *candidateStateName(CandidateState S);

struct CandidateRow {
  int64_t Id = 0;
  std::string Identity; ///< hex hash, UNIQUE
  int64_t KernelId = 0, VariantId = 0;
  std::string Level;    ///< "baseline", "source", "compiler", "launch",
                        ///< "compiler+launch"
  std::string Operator; ///< what made it: "original", "knob", "bo", ...
  std::optional<int64_t> ParentId; ///< the candidate it derives from
  std::string Point;               ///< Space::describe of its inner point
  std::string PointJson;           ///< the point's indices: [[2],[0,5]]
  std::string SettingsJson; ///< pipeline, codegen_opt, block, ... as JSON
  CandidateState State = CandidateState::Queued;
  std::optional<int64_t> Worker;
  double Created = 0;
};

struct EvaluationRow {
  int64_t Id = 0, CandidateId = 0;
  int64_t Worker = 0;
  std::string Device;
  /// TimesNs kept as times_ms JSON, EventTimesNs as event_times_ms
  CandidateResult Result;
  double MedianMs = 0, CiLoMs = 0, CiHiMs = 0, MinMs = 0;
  double EvalMs = 0;
  double Started = 0, Finished = 0; ///< seconds since the epoch
};

struct BaselineRow {
  int64_t Id = 0, KernelId = 0, Worker = 0;
  std::string Device;
  double MedianMs = 0, CiLoMs = 0, CiHiMs = 0;
  double Measured = 0;           ///< when it finished (seconds since the epoch)
  uint64_t AfterEvaluations = 0; ///< evaluations done when measured
  double BusyMs = 0;             ///< its runs' time on the device
  double Started = 0;            ///< 0 in histories older than version 3
};

struct ArchiveRow {
  int64_t KernelId = 0, Island = 0, Cell = 0, VariantId = 0;
  double Fitness = 0;
  std::string DescriptorJson; ///< [12, 0]
};

/// A line of the campaign's event log.
struct EventRow {
  int64_t Id = 0;
  double At = 0; ///< seconds since the epoch
  std::string Kind, Message;
};

/// One call of the LLM operator: what was asked (the prompt is stored once
/// under its hash), what it cost, and what came of it. Outcome: "ok" (the
/// reply made a variant, VariantId, unless it repeated one), "llm_invalid"
/// (the reply was rejected, Reason says why), "http_error", "timeout",
/// "bad_response" (retries spent), "cancelled" (the campaign ended first).
/// No field ever holds the API key.
struct LlmCallRow {
  int64_t Id = 0, KernelId = 0;
  std::optional<int64_t> ParentVariantId, VariantId;
  std::string Model, PromptHash, Outcome, Reason, Reply;
  uint64_t TokensIn = 0, TokensOut = 0;
  double LatencyMs = 0; ///< of the whole call, retries and waits included
  unsigned Attempts = 0;
  std::optional<int64_t> HttpStatus; ///< of the last attempt
  double Started = 0, Finished = 0;  ///< seconds since the epoch
};

/// One end-to-end run of the application (schema version 4): with its
/// kernels as tuned ("tuned") or its own code ("original").
struct AppRunRow {
  int64_t Id = 0;
  double At = 0; ///< seconds since the epoch
  std::string Variant;
  double WallSeconds = 0;
  int ExitCode = 0;
  std::string CommandJson; ///< the command line, as a JSON array
};

/// An evaluation with its candidate, for reports and resume.
struct EvaluatedCandidate {
  CandidateRow Candidate;
  EvaluationRow Evaluation;
};

class History {
public:
  static Expected<std::unique_ptr<History>> open(const std::string &Path,
                                                 HistoryMode Mode);
  ~History();
  History(const History &) = delete;
  History &operator=(const History &) = delete;

  const std::string &path() const { return Path; }
  /// PRAGMA user_version of the file.
  Expected<int> schemaVersion();

  /// Groups writes into one transaction; commit() makes them durable.
  Error begin();
  Error commit();
  Error rollback();

  Error putCampaign(const CampaignRow &C); ///< insert or replace (one row)
  Expected<std::optional<CampaignRow>> campaign();
  Error setCampaignState(const std::string &State);

  /// Inserts a kernel, or returns the id of the one with that name.
  Expected<int64_t> putKernel(const KernelRow &K);
  Expected<std::vector<KernelRow>> kernels();

  /// Stores a source text under its hash (idempotent).
  Error putSource(const std::string &Hash, const std::string &Text);
  Expected<std::optional<std::string>> source(const std::string &Hash);

  /// Inserts a variant; none when (kernel, genome key) exists already.
  Expected<std::optional<int64_t>> addVariant(const VariantRow &V);
  Expected<std::vector<VariantRow>> variants(int64_t KernelId);

  /// Inserts a candidate; none when its identity exists already.
  Expected<std::optional<int64_t>> addCandidate(const CandidateRow &C);
  Expected<std::optional<CandidateRow>>
  candidateByIdentity(const std::string &Identity);
  Error setCandidateState(int64_t Id, CandidateState S,
                          std::optional<int64_t> Worker = std::nullopt);
  /// Every candidate of a kernel (all kernels when KernelId is 0), by id.
  Expected<std::vector<CandidateRow>> candidates(int64_t KernelId = 0);
  /// Candidates queued or running: what a resume re-queues.
  Expected<std::vector<CandidateRow>> unfinished();

  /// Stores an evaluation and marks its candidate Done; an error if the
  /// candidate has one already.
  Expected<int64_t> addEvaluation(const EvaluationRow &E);
  /// Every evaluation of a kernel (all kernels when 0), in commit order.
  Expected<std::vector<EvaluatedCandidate>> evaluations(int64_t KernelId = 0);
  Expected<uint64_t> evaluationCount();

  /// Copies the whole database, as of its last commit, to Path with
  /// SQLite's online backup API: into Path's temporary name first, then
  /// renamed into place, so that Path is always a whole history (the copy a
  /// parallel file system keeps of a history that lives on a node-local
  /// disk).
  Error backupTo(const std::string &Path);

  Expected<int64_t> addBaseline(const BaselineRow &B);
  Expected<std::vector<BaselineRow>> baselines(int64_t KernelId = 0);

  /// Replaces the archive of a kernel.
  Error putArchive(int64_t KernelId, const std::vector<ArchiveRow> &Rows);
  Expected<std::vector<ArchiveRow>> archive(int64_t KernelId);

  /// A line in the campaign's event log (start, resume, interrupt, ...),
  /// stamped now or at At (seconds since the epoch; test fixtures).
  Error addEvent(const std::string &Kind, const std::string &Message,
                 std::optional<double> At = std::nullopt);
  /// The latest event of a kind (of any kind when Kind is empty).
  Expected<std::optional<EventRow>> lastEvent(const std::string &Kind = "");
  /// Every event whose kind starts with Prefix (all when empty), in order.
  Expected<std::vector<EventRow>> events(const std::string &Prefix = "");

  /// Stores one end-to-end run of the application (HistoryApp.cpp).
  Expected<int64_t> addAppRun(const AppRunRow &R);
  /// Every such run, in the order stored; none in histories older than
  /// version 4.
  Expected<std::vector<AppRunRow>> appRuns();

  /// Stores a prompt under its hash (idempotent).
  Error putPrompt(const std::string &Hash, const std::string &Text);
  Expected<std::optional<std::string>> prompt(const std::string &Hash);
  Expected<int64_t> addLlmCall(const LlmCallRow &C);
  /// Every LLM call of a kernel (all kernels when 0), by id; none in a
  /// history older than schema version 2.
  Expected<std::vector<LlmCallRow>> llmCalls(int64_t KernelId = 0);

private:
  History() = default;
  Error exec(const char *Sql);
  Error migrate();
  std::string Path;
  sqlite3 *Db = nullptr;
  /// The statements each result runs, prepared once (HistorySql.h).
  std::unique_ptr<detail::StatementCache> Cache;
  int Version = 0; ///< the file's schema version once opened
};

} // namespace r3
