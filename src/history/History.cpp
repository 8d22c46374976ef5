// The campaign history on SQLite: the only file that calls the SQLite C API.
//
// Every statement is prepared with bound parameters; every SQLite failure
// becomes "PATH: sqlite's message (while doing X)". The file is opened in WAL
// mode so that `r3 status` and `r3 report` read (a committed snapshot) while
// the coordinator writes, with synchronous=FULL: each commit is on disk when
// commit() returns, so neither a kill -9 nor a power loss loses a committed
// batch (NORMAL would survive a kill -9 but not a power cut, and a commit per
// batch makes the extra sync cheap). The schema is versioned with
// `PRAGMA user_version` and migrated forward by the steps in Migrations[];
// `PRAGMA application_id` marks the file as an r3 history.
// docs/history-schema.md documents all of it for sqlite3 users.
#include "history/History.h"

#include "support/FileUtil.h"

#include "history/HistorySchema.h"
#include "history/HistorySql.h"
#include "support/Machine.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cerrno>
#include <cmath>
#include <concepts>
#include <fcntl.h>
#include <iterator>
#include <span>
#include <unistd.h>

namespace r3 {

using namespace detail;

namespace {
using nlohmann::json;

std::optional<CandidateState> parseCandidateState(const std::string &S) {
  for (CandidateState C : {CandidateState::Queued, CandidateState::Running,
                           CandidateState::Done, CandidateState::Dropped})
    if (S == candidateStateName(C))
      return C;
  return std::nullopt;
}

// --- row readers: the column order is the one of the matching SELECT ---

constexpr const char *CandidateColumns =
    "c.id, c.identity, c.kernel_id, c.variant_id, c.level, c.operator, "
    "c.parent_id, c.point, c.point_json, c.settings_json, c.state, c.worker, "
    "c.created";
constexpr int CandidateColumnCount = 13;

Error readCandidate(const Statement &S, CandidateRow &R, int At = 0) {
  R.Id = S.integer(At);
  R.Identity = S.text(At + 1);
  R.KernelId = S.integer(At + 2);
  R.VariantId = S.integer(At + 3);
  R.Level = S.text(At + 4);
  R.Operator = S.text(At + 5);
  R.ParentId = S.optInteger(At + 6);
  R.Point = S.text(At + 7);
  R.PointJson = S.text(At + 8);
  R.SettingsJson = S.text(At + 9);
  auto State = parseCandidateState(S.text(At + 10));
  if (!State)
    return makeError("candidate ", R.Id, " has an unknown state '",
                     S.text(At + 10), "'");
  R.State = *State;
  R.Worker = S.optInteger(At + 11);
  R.Created = S.real(At + 12);
  return Error::success();
}

constexpr const char *EvaluationColumns =
    "e.id, e.candidate_id, e.worker, e.device, e.verified, e.failure, "
    "e.message, e.times_ms, e.compile_ms, e.registers, e.spills, "
    "e.shared_bytes, e.pipeline, e.codegen_opt, e.poisoned, e.sandbox, "
    "e.median_ms, e.ci_lo_ms, e.ci_hi_ms, e.min_ms, e.eval_ms, e.started, "
    "e.finished";

/// The evaluations' columns a file of schema Version has: version 3 added
/// the timer, the event times and the device time, which older files read
/// as their defaults (readers never migrate).
std::string evaluationColumns(int Version) {
  return std::string(EvaluationColumns) +
         (Version >= 3 ? ", e.timer, e.event_times_ms, e.busy_ms"
                       : ", '', '[]', 0") +
         (Version >= 5 ? ", e.load_ms, e.restore_ms" : ", 0, 0") +
         (Version >= 6 ? ", e.verify_ms" : ", 0");
}

/// times_ms: a JSON array of milliseconds, from nanoseconds and back.
std::string timesJson(const std::vector<uint64_t> &TimesNs) {
  json A = json::array();
  for (uint64_t Ns : TimesNs)
    A.push_back(static_cast<double>(Ns) / 1e6);
  return A.dump();
}

Error parseTimes(const std::string &Text, std::vector<uint64_t> &TimesNs) {
  try {
    for (double Ms : json::parse(Text).get<std::vector<double>>())
      TimesNs.push_back(static_cast<uint64_t>(std::llround(Ms * 1e6)));
  } catch (const json::exception &E) {
    return makeError("times_ms is not an array of numbers: ", E.what());
  }
  return Error::success();
}

Error readResult(const Statement &S, CandidateResult &R, int At) {
  R.Verified = S.integer(At) != 0;
  R.Failure = FailureKind::None;
  if (!S.isNull(At + 1)) {
    auto Kind = parseFailureKind(S.text(At + 1));
    if (!Kind)
      return makeError("unknown failure kind '", S.text(At + 1), "'");
    R.Failure = *Kind;
  }
  R.Message = S.text(At + 2);
  R3_TRY(parseTimes(S.text(At + 3), R.TimesNs));
  R.CompileMs = S.real(At + 4);
  R.Registers = S.optInteger(At + 5);
  R.Spills = S.optInteger(At + 6);
  R.SharedBytes = S.optInteger(At + 7);
  R.Pipeline = S.text(At + 8);
  R.CodegenOpt = static_cast<int>(S.integer(At + 9));
  R.Poisoned = S.integer(At + 10) != 0;
  R.Sandbox = S.text(At + 11);
  return Error::success();
}

Error readEvaluation(const Statement &S, EvaluationRow &R, int At) {
  R.Id = S.integer(At);
  R.CandidateId = S.integer(At + 1);
  R.Worker = S.integer(At + 2);
  R.Device = S.text(At + 3);
  if (Error E = readResult(S, R.Result, At + 4))
    return std::move(E).context("evaluation " + std::to_string(R.Id));
  R.MedianMs = S.real(At + 16); // NULL (no timed run) reads as 0
  R.CiLoMs = S.real(At + 17);
  R.CiHiMs = S.real(At + 18);
  R.MinMs = S.real(At + 19);
  R.EvalMs = S.real(At + 20);
  R.Started = S.real(At + 21);
  R.Finished = S.real(At + 22);
  R.Result.Timer = S.text(At + 23);
  if (Error E = parseTimes(S.text(At + 24), R.Result.EventTimesNs))
    return std::move(E).context("evaluation " + std::to_string(R.Id));
  R.Result.BusyMs = S.real(At + 25);
  R.Result.LoadMs = S.real(At + 26);
  R.Result.RestoreMs = S.real(At + 27);
  R.Result.VerifyMs = S.real(At + 28);
  return Error::success();
}

Error readKernel(const Statement &S, KernelRow &R) {
  R.Id = S.integer(0);
  R.Name = S.text(1);
  R.Capture = S.text(2);
  R.CaptureHash = S.text(3);
  return Error::success();
}

Error readVariant(const Statement &S, VariantRow &R) {
  R.Id = S.integer(0);
  R.KernelId = S.integer(1);
  R.GenomeKey = S.text(2);
  R.GenomeJson = S.text(3);
  R.SourceHash = S.text(4); // NULL: the recorded code
  R.ParentsJson = S.text(5);
  R.Operator = S.text(6);
  R.Island = S.integer(7);
  R.Created = S.real(8);
  return Error::success();
}

Error readBaseline(const Statement &S, BaselineRow &R) {
  R.Id = S.integer(0);
  R.KernelId = S.integer(1);
  R.Worker = S.integer(2);
  R.Device = S.text(3);
  R.MedianMs = S.real(4);
  R.CiLoMs = S.real(5);
  R.CiHiMs = S.real(6);
  R.Measured = S.real(7);
  R.AfterEvaluations = static_cast<uint64_t>(S.integer(8));
  R.BusyMs = S.real(9);
  R.Started = S.real(10);
  return Error::success();
}

Error readArchive(const Statement &S, ArchiveRow &R) {
  R.KernelId = S.integer(0);
  R.Island = S.integer(1);
  R.Cell = S.integer(2);
  R.VariantId = S.integer(3);
  R.Fitness = S.real(4);
  R.DescriptorJson = S.text(5);
  return Error::success();
}

Error readEvent(const Statement &S, EventRow &R) {
  R.Id = S.integer(0);
  R.At = S.real(1);
  R.Kind = S.text(2);
  R.Message = S.text(3);
  return Error::success();
}

Error readCampaign(const Statement &S, CampaignRow &R) {
  R.Path = S.text(0);
  R.Text = S.text(1);
  R.Backend = S.text(2);
  R.Seed = static_cast<uint64_t>(S.integer(3));
  R.Created = S.real(4);
  R.State = S.text(5);
  return Error::success();
}

/// A timing column: NULL when the candidate never ran timed.
std::optional<double> timing(const EvaluationRow &E, double Ms) {
  return E.Result.TimesNs.empty() ? std::nullopt : std::optional<double>(Ms);
}

std::optional<std::string> orNull(const std::string &S) {
  return S.empty() ? std::nullopt : std::optional<std::string>(S);
}

/// Creates Path, empty, failing if it exists (O_EXCL: no race with another
/// r3 creating the same campaign).
Error createEmptyFile(const std::string &Path) {
  int Fd = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (Fd < 0 && errno == EEXIST)
    return makeError("cannot create campaign database '", Path,
                     "': the file exists");
  if (Fd < 0)
    return errnoError("cannot create campaign database '" + Path + "'");
  ::close(Fd);
  return Error::success();
}

/// A SAVEPOINT that rolls back unless released: makes a group of statements
/// atomic both inside and outside a begin()/commit() transaction.
class Savepoint {
public:
  Savepoint(sqlite3 *Db, const std::string &Path) : Db(Db), Path(Path) {}
  ~Savepoint() {
    if (Open)
      sqlite3_exec(Db, "ROLLBACK TO r3_step; RELEASE r3_step", nullptr, nullptr,
                   nullptr);
  }
  Error start() {
    R3_TRY(execute(Db, Path, "SAVEPOINT r3_step", "starting a savepoint"));
    Open = true;
    return Error::success();
  }
  Error release() {
    R3_TRY(execute(Db, Path, "RELEASE r3_step", "releasing a savepoint"));
    Open = false;
    return Error::success();
  }

private:
  sqlite3 *Db;
  const std::string &Path;
  bool Open = false;
};
/// WAL (readers beside the writer), synchronous = FULL (a commit survives a
/// power cut), foreign keys checked.
Error configureWriter(sqlite3 *Db, const std::string &Path) {
  Statement S(Db, Path, "setting the journal mode");
  R3_TRY(S.prepare("PRAGMA journal_mode = WAL"));
  Expected<bool> Row = S.step();
  if (!Row)
    return Row.takeError();
  std::string JournalMode = *Row ? S.text(0) : "";
  if (JournalMode != "wal")
    return makeError(Path,
                     ": cannot use write-ahead logging here (the "
                     "journal mode stays '",
                     JournalMode, "')");
  R3_TRY(execute(Db, Path, "PRAGMA synchronous = FULL",
                 "setting synchronous = FULL"));
  return execute(Db, Path, "PRAGMA foreign_keys = ON", "enabling foreign keys");
}

} // namespace

const char *candidateStateName(CandidateState S) {
  switch (S) {
  case CandidateState::Queued:
    return "queued";
  case CandidateState::Running:
    return "running";
  case CandidateState::Done:
    return "done";
  case CandidateState::Dropped:
    return "dropped";
  }
  return "unknown";
}

// --- opening ---

Expected<std::unique_ptr<History>> History::open(const std::string &Path,
                                                 HistoryMode Mode) {
  if (Mode == HistoryMode::Create)
    R3_TRY(createEmptyFile(Path));
  else if (!pathExists(Path))
    return makeError("no such campaign database '", Path, "'");
  std::unique_ptr<History> H(new History());
  H->Path = Path;
  int Flags = Mode == HistoryMode::ReadOnly ? SQLITE_OPEN_READONLY
                                            : SQLITE_OPEN_READWRITE;
  if (sqlite3_open_v2(Path.c_str(), &H->Db, Flags, nullptr) != SQLITE_OK)
    return sqliteError(H->Db, Path, "opening the database");
  H->Cache = std::make_unique<StatementCache>(H->Db);
  sqlite3_extended_result_codes(H->Db, 1);
  sqlite3_busy_timeout(H->Db, 10000);
  int64_t AppId = 0, Objects = 0;
  R3_TRY(moveInto(queryInteger(H->Db, Path, "PRAGMA application_id",
                               "reading the application id"),
                  AppId));
  R3_TRY(
      moveInto(queryInteger(H->Db, Path, "SELECT count(*) FROM sqlite_schema",
                            "reading the schema"),
               Objects));
  // An empty database is one whose creation was cut short: Open finishes it.
  bool Fresh = AppId == 0 && Objects == 0;
  if (AppId != HistoryApplicationId &&
      !(Fresh && Mode != HistoryMode::ReadOnly))
    return makeError(Path,
                     ": not an r3 campaign history (its application_id "
                     "is ",
                     AppId, ", r3's is ", HistoryApplicationId, ")");
  int Version = 0;
  R3_TRY(moveInto(H->schemaVersion(), Version));
  if (Version > HistorySchemaVersion)
    return makeError(Path, ": schema version ", Version,
                     " is newer than this r3 supports (", HistorySchemaVersion,
                     ")");
  H->Version = Version;
  if (Mode == HistoryMode::ReadOnly) {
    // Older versions are read as they are (what they lack reads as empty);
    // only a writer migrates.
    if (Version < 1)
      return makeError(Path, ": schema version ", Version,
                       " is older than this r3 reads (1); 'r3 tune --resume' "
                       "migrates it");
    return H;
  }
  R3_TRY(configureWriter(H->Db, Path));
  R3_TRY(H->migrate());
  H->Version = HistorySchemaVersion;
  return H;
}

History::~History() {
  Cache.reset(); // its statements first: the connection closes after them
  sqlite3_close_v2(Db);
}

Expected<int> History::schemaVersion() {
  Expected<int64_t> V = queryInteger(Db, Path, "PRAGMA user_version",
                                     "reading the schema version");
  if (!V)
    return V.takeError();
  return static_cast<int>(*V);
}

Error History::exec(const char *Sql) { return execute(Db, Path, Sql, Sql); }

Error History::migrate() {
  // IMMEDIATE: two processes opening one file migrate it once.
  R3_TRY(execute(Db, Path, "BEGIN IMMEDIATE", "starting the migration"));
  Error E = [&]() -> Error {
    int Version = 0;
    R3_TRY(moveInto(schemaVersion(), Version));
    for (const Migration &M : Migrations) {
      if (M.To <= Version)
        continue;
      R3_TRY(execute(Db, Path, M.Sql, "migrating the schema"));
      std::string Set =
          "PRAGMA user_version = " + std::to_string(M.To) +
          "; PRAGMA application_id = " + std::to_string(HistoryApplicationId);
      R3_TRY(execute(Db, Path, Set.c_str(), "setting the schema version"));
    }
    return execute(Db, Path, "COMMIT", "committing the migration");
  }();
  if (E)
    sqlite3_exec(Db, "ROLLBACK", nullptr, nullptr, nullptr);
  return E;
}

// --- transactions ---

Error History::begin() {
  // IMMEDIATE takes the write lock now, so a batch never fails half-way
  // with "database is locked".
  return execute(Db, Path, "BEGIN IMMEDIATE", "beginning a transaction");
}

Error History::commit() {
  return execute(Db, Path, "COMMIT", "committing a transaction");
}

Error History::rollback() {
  return execute(Db, Path, "ROLLBACK", "rolling back a transaction");
}

// --- the campaign ---

Error History::putCampaign(const CampaignRow &C) {
  Statement S(Db, Path, "storing the campaign");
  R3_TRY(S.prepare(
      "INSERT INTO campaign (id, path, text, backend, seed, created, state) "
      "VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
      "path = excluded.path, text = excluded.text, backend = excluded.backend, "
      "seed = excluded.seed, created = excluded.created, "
      "state = excluded.state"));
  return S.bind(C.Path, C.Text, C.Backend, C.Seed, C.Created, C.State).run();
}

Expected<std::optional<CampaignRow>> History::campaign() {
  Statement S(Db, Path, "reading the campaign");
  R3_TRY(S.prepare("SELECT path, text, backend, seed, created, state "
                   "FROM campaign WHERE id = 1"));
  return first<CampaignRow>(S, readCampaign);
}

Error History::setCampaignState(const std::string &State) {
  Statement S(Db, Path, "setting the campaign state");
  R3_TRY(S.prepare("UPDATE campaign SET state = ? WHERE id = 1"));
  R3_TRY(S.bind(State).run());
  if (sqlite3_changes(Db) == 0)
    return makeError(Path, ": no campaign to set the state '", State, "' of");
  return Error::success();
}

// --- kernels and sources ---

Expected<int64_t> History::putKernel(const KernelRow &K) {
  Statement S(Db, Path, "storing a kernel");
  R3_TRY(S.prepare("INSERT INTO kernels (name, capture, capture_hash) "
                   "VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                   "capture = excluded.capture, "
                   "capture_hash = excluded.capture_hash RETURNING id"));
  Expected<bool> Row = S.bind(K.Name, K.Capture, K.CaptureHash).step();
  if (!Row)
    return Row.takeError();
  if (!*Row)
    return makeError(Path, ": storing kernel '", K.Name, "' returned no id");
  int64_t Id = S.integer(0);
  R3_TRY(S.run());
  return Id;
}

Expected<std::vector<KernelRow>> History::kernels() {
  Statement S(Db, Path, "reading the kernels");
  R3_TRY(S.prepare(
      "SELECT id, name, capture, capture_hash FROM kernels ORDER BY id"));
  return collect<KernelRow>(S, readKernel);
}

Error History::putSource(const std::string &Hash, const std::string &Text) {
  Statement S(Db, Path, "storing a source text");
  R3_TRY(S.prepare("INSERT INTO sources (hash, text) VALUES (?, ?) "
                   "ON CONFLICT (hash) DO NOTHING"));
  return S.bind(Hash, Text).run();
}

Expected<std::optional<std::string>> History::source(const std::string &Hash) {
  Statement S(Db, Path, "reading a source text");
  R3_TRY(S.prepare("SELECT text FROM sources WHERE hash = ?"));
  S.bind(Hash);
  return first<std::string>(S, [](const Statement &S, std::string &T) {
    T = S.text(0);
    return Error::success();
  });
}

// --- variants ---

Expected<std::optional<int64_t>> History::addVariant(const VariantRow &V) {
  Statement S(Db, Path, "adding a variant");
  R3_TRY(S.prepare(
      "INSERT INTO variants (kernel_id, genome_key, genome_json, source_hash, "
      "parents_json, operator, island, created) VALUES (?, ?, ?, ?, ?, ?, ?, "
      "?) ON CONFLICT (kernel_id, genome_key) DO NOTHING"));
  R3_TRY(S.bind(V.KernelId, V.GenomeKey, V.GenomeJson, orNull(V.SourceHash),
                V.ParentsJson, V.Operator, V.Island, V.Created)
             .run());
  if (sqlite3_changes(Db) == 0)
    return std::optional<int64_t>();
  return std::optional<int64_t>(sqlite3_last_insert_rowid(Db));
}

Expected<std::vector<VariantRow>> History::variants(int64_t KernelId) {
  Statement S(Db, Path, "reading the variants");
  R3_TRY(S.prepare("SELECT id, kernel_id, genome_key, genome_json, "
                   "source_hash, parents_json, operator, island, created "
                   "FROM variants WHERE kernel_id = ? ORDER BY id"));
  S.bind(KernelId);
  return collect<VariantRow>(S, readVariant);
}

// --- candidates ---

Expected<std::optional<int64_t>> History::addCandidate(const CandidateRow &C) {
  Statement S(*Cache, Path, "adding a candidate");
  R3_TRY(S.prepare(
      "INSERT INTO candidates (identity, kernel_id, variant_id, level, "
      "operator, parent_id, point, point_json, settings_json, state, worker, "
      "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (identity) DO NOTHING"));
  R3_TRY(S.bind(C.Identity, C.KernelId, C.VariantId, C.Level, C.Operator,
                C.ParentId, C.Point, C.PointJson, C.SettingsJson,
                std::string_view(candidateStateName(C.State)), C.Worker,
                C.Created)
             .run());
  if (sqlite3_changes(Db) == 0)
    return std::optional<int64_t>();
  return std::optional<int64_t>(sqlite3_last_insert_rowid(Db));
}

Expected<std::optional<CandidateRow>>
History::candidateByIdentity(const std::string &Identity) {
  Statement S(Db, Path, "looking up a candidate");
  std::string Sql = std::string("SELECT ") + CandidateColumns +
                    " FROM candidates c WHERE c.identity = ?";
  R3_TRY(S.prepare(Sql.c_str()));
  S.bind(Identity);
  return first<CandidateRow>(S, [](const Statement &S, CandidateRow &R) {
    return readCandidate(S, R);
  });
}

Error History::setCandidateState(int64_t Id, CandidateState State,
                                 std::optional<int64_t> Worker) {
  Statement S(*Cache, Path, "setting a candidate's state");
  R3_TRY(S.prepare("UPDATE candidates SET state = ?, "
                   "worker = coalesce(?, worker) WHERE id = ?"));
  R3_TRY(S.bind(std::string_view(candidateStateName(State)), Worker, Id).run());
  if (sqlite3_changes(Db) == 0)
    return makeError(Path, ": no candidate ", Id, " to mark ",
                     candidateStateName(State));
  return Error::success();
}

Expected<std::vector<CandidateRow>> History::candidates(int64_t KernelId) {
  Statement S(Db, Path, "reading the candidates");
  std::string Sql = std::string("SELECT ") + CandidateColumns +
                    " FROM candidates c WHERE ?1 = 0 OR c.kernel_id = ?1 "
                    "ORDER BY c.id";
  R3_TRY(S.prepare(Sql.c_str()));
  S.bind(KernelId);
  return collect<CandidateRow>(S, [](const Statement &S, CandidateRow &R) {
    return readCandidate(S, R);
  });
}

Expected<std::vector<CandidateRow>> History::unfinished() {
  Statement S(Db, Path, "reading the unfinished candidates");
  std::string Sql = std::string("SELECT ") + CandidateColumns +
                    " FROM candidates c WHERE c.state IN ('queued', "
                    "'running') ORDER BY c.id";
  R3_TRY(S.prepare(Sql.c_str()));
  return collect<CandidateRow>(S, [](const Statement &S, CandidateRow &R) {
    return readCandidate(S, R);
  });
}

// --- evaluations ---

Expected<int64_t> History::addEvaluation(const EvaluationRow &E) {
  Savepoint Step(Db, Path);
  R3_TRY(Step.start());
  Statement Mark(*Cache, Path, "marking an evaluated candidate done");
  R3_TRY(Mark.prepare("UPDATE candidates SET state = 'done' WHERE id = ?"));
  R3_TRY(Mark.bind(E.CandidateId).run());
  if (sqlite3_changes(Db) == 0)
    return makeError(Path, ": no candidate ", E.CandidateId,
                     " for an evaluation");
  Statement S(*Cache, Path, "adding an evaluation");
  R3_TRY(S.prepare(
      "INSERT INTO evaluations (candidate_id, verified, failure, message, "
      "times_ms, repetitions, compile_ms, registers, spills, shared_bytes, "
      "pipeline, codegen_opt, poisoned, sandbox, median_ms, ci_lo_ms, "
      "ci_hi_ms, min_ms, eval_ms, worker, device, started, finished, timer, "
      "event_times_ms, busy_ms, load_ms, restore_ms, verify_ms) VALUES (?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?)"));
  const CandidateResult &R = E.Result;
  std::optional<std::string> Failure;
  if (R.Failure != FailureKind::None)
    Failure = failureKindName(R.Failure);
  S.bind(E.CandidateId, R.Verified, Failure, R.Message, timesJson(R.TimesNs),
         R.TimesNs.size(), R.CompileMs, R.Registers, R.Spills, R.SharedBytes,
         R.Pipeline, R.CodegenOpt, R.Poisoned, R.Sandbox, timing(E, E.MedianMs),
         timing(E, E.CiLoMs), timing(E, E.CiHiMs), timing(E, E.MinMs), E.EvalMs,
         E.Worker, E.Device, E.Started, E.Finished, R.Timer,
         timesJson(R.EventTimesNs), R.BusyMs, R.LoadMs, R.RestoreMs,
         R.VerifyMs);
  if (Error Err = S.run()) {
    if (S.extendedCode() == SQLITE_CONSTRAINT_UNIQUE)
      return makeError(Path, ": candidate ", E.CandidateId,
                       " has an evaluation already");
    return Err;
  }
  int64_t Id = sqlite3_last_insert_rowid(Db);
  R3_TRY(Step.release());
  return Id;
}

Expected<std::vector<EvaluatedCandidate>>
History::evaluations(int64_t KernelId) {
  Statement S(Db, Path, "reading the evaluations");
  std::string Sql = std::string("SELECT ") + CandidateColumns + ", " +
                    evaluationColumns(Version) +
                    " FROM evaluations e JOIN candidates c ON c.id = "
                    "e.candidate_id WHERE ?1 = 0 OR c.kernel_id = ?1 "
                    "ORDER BY e.id";
  R3_TRY(S.prepare(Sql.c_str()));
  S.bind(KernelId);
  return collect<EvaluatedCandidate>(
      S, [](const Statement &S, EvaluatedCandidate &R) -> Error {
        R3_TRY(readCandidate(S, R.Candidate));
        return readEvaluation(S, R.Evaluation, CandidateColumnCount);
      });
}

Expected<uint64_t> History::evaluationCount() {
  Expected<int64_t> N = queryInteger(
      Db, Path, "SELECT count(*) FROM evaluations", "counting the evaluations");
  if (!N)
    return N.takeError();
  return static_cast<uint64_t>(*N);
}

// --- baselines, archive, events ---

Expected<int64_t> History::addBaseline(const BaselineRow &B) {
  Statement S(*Cache, Path, "adding a baseline");
  R3_TRY(S.prepare("INSERT INTO baselines (kernel_id, worker, device, "
                   "median_ms, ci_lo_ms, ci_hi_ms, measured, "
                   "after_evaluations, busy_ms, started) VALUES (?, ?, ?, ?, "
                   "?, ?, ?, ?, ?, ?)"));
  R3_TRY(S.bind(B.KernelId, B.Worker, B.Device, B.MedianMs, B.CiLoMs, B.CiHiMs,
                B.Measured, B.AfterEvaluations, B.BusyMs, B.Started)
             .run());
  return sqlite3_last_insert_rowid(Db);
}

Expected<std::vector<BaselineRow>> History::baselines(int64_t KernelId) {
  Statement S(Db, Path, "reading the baselines");
  std::string Sql = std::string("SELECT id, kernel_id, worker, device, "
                                "median_ms, ci_lo_ms, ci_hi_ms, measured, "
                                "after_evaluations, ") +
                    (Version >= 3 ? "busy_ms, started" : "0, 0") +
                    " FROM baselines WHERE ?1 = 0 OR kernel_id = ?1 ORDER "
                    "BY id";
  R3_TRY(S.prepare(Sql.c_str()));
  S.bind(KernelId);
  return collect<BaselineRow>(S, readBaseline);
}

Error History::putArchive(int64_t KernelId,
                          const std::vector<ArchiveRow> &Rows) {
  Savepoint Step(Db, Path);
  R3_TRY(Step.start());
  Statement Clear(Db, Path, "clearing the archive");
  R3_TRY(Clear.prepare("DELETE FROM archive WHERE kernel_id = ?"));
  R3_TRY(Clear.bind(KernelId).run());
  for (const ArchiveRow &R : Rows) {
    Statement S(Db, Path, "storing the archive");
    R3_TRY(S.prepare("INSERT INTO archive (kernel_id, island, cell, "
                     "variant_id, fitness, descriptor_json) VALUES (?, ?, ?, "
                     "?, ?, ?)"));
    R3_TRY(S.bind(KernelId, R.Island, R.Cell, R.VariantId, R.Fitness,
                  R.DescriptorJson)
               .run());
  }
  return Step.release();
}

Expected<std::vector<ArchiveRow>> History::archive(int64_t KernelId) {
  Statement S(Db, Path, "reading the archive");
  R3_TRY(S.prepare("SELECT kernel_id, island, cell, variant_id, fitness, "
                   "descriptor_json FROM archive WHERE kernel_id = ? "
                   "ORDER BY island, cell"));
  S.bind(KernelId);
  return collect<ArchiveRow>(S, readArchive);
}

Error History::addEvent(const std::string &Kind, const std::string &Message,
                        std::optional<double> At) {
  Statement S(*Cache, Path, "adding an event");
  R3_TRY(S.prepare("INSERT INTO events (at, kind, message) VALUES (?, ?, ?)"));
  return S.bind(At.value_or(nowSeconds()), Kind, Message).run();
}

Expected<std::optional<EventRow>> History::lastEvent(const std::string &Kind) {
  Statement S(Db, Path, "reading the events");
  R3_TRY(S.prepare("SELECT id, at, kind, message FROM events "
                   "WHERE ?1 = '' OR kind = ?1 ORDER BY id DESC LIMIT 1"));
  S.bind(Kind);
  return first<EventRow>(S, readEvent);
}

Expected<std::vector<EventRow>> History::events(const std::string &Prefix) {
  Statement S(Db, Path, "reading the events");
  R3_TRY(S.prepare("SELECT id, at, kind, message FROM events "
                   "WHERE substr(kind, 1, length(?1)) = ?1 ORDER BY id"));
  S.bind(Prefix);
  return collect<EventRow>(S, readEvent);
}

// --- copies ---

Error History::backupTo(const std::string &Target) {
  std::string Tmp = temporaryPathFor(Target);
  ::unlink(Tmp.c_str());
  sqlite3 *To = nullptr;
  if (sqlite3_open_v2(Tmp.c_str(), &To,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    Error E = sqliteError(To, Tmp, "opening the backup");
    sqlite3_close(To);
    return E;
  }
  sqlite3_backup *B = sqlite3_backup_init(To, "main", Db, "main");
  int Rc = B ? sqlite3_backup_step(B, -1) : sqlite3_errcode(To);
  if (B)
    sqlite3_backup_finish(B);
  Error E = Rc == SQLITE_DONE
                ? Error::success()
                : makeError(Target, ": backing up the history: ",
                            sqlite3_errstr(Rc));
  sqlite3_close(To);
  if (E) {
    ::unlink(Tmp.c_str());
    return E;
  }
  return commitTemporary(Tmp, Target);
}

} // namespace r3

