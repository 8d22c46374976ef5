// The campaign history: open modes and their refusals (a foreign SQLite file,
// a schema from a newer r3), every row type through a write and a read, the
// UNIQUE identities that keep a candidate from being evaluated twice, and the
// checkpoint guarantees: a reader sees committed rows only, a rollback or a
// killed writer loses only the uncommitted batch.
#include "Catch.h"

#include "history/History.h"

#include <sqlite3.h>

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace r3;

namespace {
/// A database path in the temporary directory, removed (with its WAL and
/// shared-memory files) before and after the test.
class TempDb {
public:
  explicit TempDb(const std::string &Name)
      : Path((std::filesystem::temp_directory_path() /
              ("r3-history-" + std::to_string(::getpid()) + "-" + Name))
                 .string()) {
    removeAll();
  }
  ~TempDb() { removeAll(); }
  const std::string Path;

private:
  void removeAll() {
    for (const char *Suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(Path + Suffix);
  }
};

bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}

std::unique_ptr<History> openOk(const std::string &Path, HistoryMode Mode) {
  auto H = History::open(Path, Mode);
  INFO((H ? std::string() : H.error().message()));
  REQUIRE(H);
  return std::move(*H);
}

std::string openError(const std::string &Path, HistoryMode Mode) {
  auto H = History::open(Path, Mode);
  REQUIRE_FALSE(H);
  return H.error().message();
}

template <typename T> T value(Expected<T> V) {
  INFO((V ? std::string() : V.error().message()));
  REQUIRE(V);
  return std::move(*V);
}

void ok(Error E) {
  INFO((E ? E.message() : std::string()));
  REQUIRE_FALSE(E);
}

/// Runs SQL on the file directly, outside History.
void rawSql(const std::string &Path, const char *Sql) {
  sqlite3 *Db = nullptr;
  REQUIRE(sqlite3_open(Path.c_str(), &Db) == SQLITE_OK);
  int Rc = sqlite3_exec(Db, Sql, nullptr, nullptr, nullptr);
  INFO(sqlite3_errmsg(Db));
  sqlite3_close(Db);
  REQUIRE(Rc == SQLITE_OK);
}

/// The first column of the first row of a query, read outside History.
std::string rawText(const std::string &Path, const char *Sql) {
  sqlite3 *Db = nullptr;
  REQUIRE(sqlite3_open_v2(Path.c_str(), &Db, SQLITE_OPEN_READONLY, nullptr) ==
          SQLITE_OK);
  sqlite3_stmt *S = nullptr;
  int Rc = sqlite3_prepare_v2(Db, Sql, -1, &S, nullptr);
  INFO(sqlite3_errmsg(Db));
  REQUIRE(Rc == SQLITE_OK);
  std::string Out;
  if (sqlite3_step(S) == SQLITE_ROW && sqlite3_column_text(S, 0))
    Out = reinterpret_cast<const char *>(sqlite3_column_text(S, 0));
  sqlite3_finalize(S);
  sqlite3_close(Db);
  return Out;
}

int64_t addKernel(History &H, const std::string &Name = "saxpy") {
  return value(H.putKernel({0, Name, "cap.h5", "fingerprint-" + Name}));
}

int64_t addRecordedVariant(History &H, int64_t Kernel) {
  VariantRow V;
  V.KernelId = Kernel;
  V.GenomeKey = "recorded";
  V.GenomeJson = "{}";
  V.Operator = "original";
  auto Id = value(H.addVariant(V));
  REQUIRE(Id);
  return *Id;
}

CandidateRow candidate(int64_t Kernel, int64_t Variant,
                       const std::string &Identity) {
  CandidateRow C;
  C.Identity = Identity;
  C.KernelId = Kernel;
  C.VariantId = Variant;
  C.Level = "compiler";
  C.Operator = "bo";
  C.Point = "pipeline=default<O2>";
  C.PointJson = "[[1],[0]]";
  C.SettingsJson = R"({"pipeline":"default<O2>","codegen_opt":2})";
  C.Created = 1700000000.5;
  return C;
}

std::vector<std::string> identities(History &H) {
  std::vector<std::string> Out;
  for (const CandidateRow &C : value(H.candidates()))
    Out.push_back(C.Identity);
  return Out;
}

/// A kernel with its recorded variant: the ids candidates need.
struct Fixture {
  int64_t Kernel = 0, Variant = 0;
};

Fixture populate(History &H) {
  Fixture F;
  F.Kernel = addKernel(H);
  F.Variant = addRecordedVariant(H, F.Kernel);
  return F;
}

EvaluationRow evaluation(int64_t Candidate) {
  EvaluationRow E;
  E.CandidateId = Candidate;
  E.Worker = 3;
  E.Device = "host cpu";
  E.Result.Verified = false;
  E.Result.Failure = FailureKind::WrongResult;
  E.Result.Message = "region 2: 17 of 4096 elements differ";
  E.Result.TimesNs = {1234567, 1300001, 987654321};
  E.Result.CompileMs = 41.5;
  E.Result.Registers = 32;
  E.Result.Spills = 0;
  E.Result.Pipeline = "default<O3>";
  E.Result.CodegenOpt = 3;
  E.Result.Poisoned = true;
  E.Result.Sandbox = "landlock";
  E.Result.LoadMs = 2.5;
  E.Result.RestoreMs = 7.25;
  E.Result.VerifyMs = 3.5;
  E.MedianMs = 1.300001;
  E.CiLoMs = 1.234567;
  E.CiHiMs = 987.654321;
  E.MinMs = 1.234567;
  E.EvalMs = 1000.25;
  E.Started = 1700000001.25;
  E.Finished = 1700000002.75;
  return E;
}
} // namespace

TEST_CASE("history: create, open and read-only open", "[history]") {
  TempDb Db("modes.db");
  std::string Missing = "no such campaign database '" + Db.Path + "'";
  CHECK(openError(Db.Path, HistoryMode::Open) == Missing);
  CHECK(openError(Db.Path, HistoryMode::ReadOnly) == Missing);
  {
    auto H = openOk(Db.Path, HistoryMode::Create);
    CHECK(value(H->schemaVersion()) == HistorySchemaVersion);
    CHECK(H->path() == Db.Path);
    addKernel(*H);
  }
  // What sqlite3 users see: WAL, the schema version, r3's application id.
  CHECK(rawText(Db.Path, "PRAGMA journal_mode") == "wal");
  CHECK(rawText(Db.Path, "PRAGMA user_version") ==
        std::to_string(HistorySchemaVersion));
  CHECK(rawText(Db.Path, "PRAGMA application_id") ==
        std::to_string(0x72336462));
  CHECK(openError(Db.Path, HistoryMode::Create) ==
        "cannot create campaign database '" + Db.Path + "': the file exists");
  {
    auto H = openOk(Db.Path, HistoryMode::Open);
    CHECK(value(H->kernels()).size() == 1);
  }
  auto R = openOk(Db.Path, HistoryMode::ReadOnly);
  CHECK(value(R->kernels()).size() == 1);
  CHECK(value(R->schemaVersion()) == HistorySchemaVersion);
  Expected<int64_t> Write = R->putKernel({0, "other", "c.h5", "h"});
  REQUIRE_FALSE(Write);
  const std::string &Msg = Write.error().message();
  CHECK(Msg.starts_with(Db.Path + ": "));
  CHECK(contains(Msg, "readonly"));
  CHECK(Msg.ends_with("(while storing a kernel)"));
}

TEST_CASE("history: an empty file left by a cut-short creation is opened",
          "[history]") {
  TempDb Db("empty.db");
  {
    std::FILE *F = std::fopen(Db.Path.c_str(), "w");
    std::fclose(F);
  }
  // A reader does not finish the creation: the file is not a history yet.
  CHECK(openError(Db.Path, HistoryMode::ReadOnly)
            .starts_with(Db.Path + ": not an r3 campaign history"));
  auto H = openOk(Db.Path, HistoryMode::Open);
  CHECK(value(H->schemaVersion()) == HistorySchemaVersion);
  CHECK(value(H->kernels()).empty());
}

TEST_CASE("history: a schema from a newer r3 is refused", "[history]") {
  TempDb Db("future.db");
  openOk(Db.Path, HistoryMode::Create);
  rawSql(Db.Path, "PRAGMA user_version = 99");
  std::string Expected = Db.Path +
                         ": schema version 99 is newer than this r3 "
                         "supports (" +
                         std::to_string(HistorySchemaVersion) + ")";
  CHECK(openError(Db.Path, HistoryMode::Open) == Expected);
  CHECK(openError(Db.Path, HistoryMode::ReadOnly) == Expected);
  // Refusing it wrote nothing: the version is still the newer one.
  CHECK(rawText(Db.Path, "PRAGMA user_version") == "99");
}

TEST_CASE("history: reopening a current history migrates nothing",
          "[history]") {
  TempDb Db("reopen.db");
  { addKernel(*openOk(Db.Path, HistoryMode::Create)); }
  std::string Schema =
      rawText(Db.Path, "SELECT group_concat(sql, ';') FROM sqlite_schema");
  for (int I = 0; I < 2; ++I) {
    auto H = openOk(Db.Path, HistoryMode::Open);
    CHECK(value(H->schemaVersion()) == HistorySchemaVersion);
    CHECK(value(H->kernels()).size() == 1);
  }
  CHECK(rawText(Db.Path, "SELECT group_concat(sql, ';') FROM sqlite_schema") ==
        Schema);
}

TEST_CASE("history: files that are not r3 histories are refused", "[history]") {
  TempDb Db("foreign.db");
  rawSql(Db.Path, "CREATE TABLE people (name TEXT); "
                  "INSERT INTO people VALUES ('ada')");
  for (HistoryMode M : {HistoryMode::Open, HistoryMode::ReadOnly})
    CHECK(openError(Db.Path, M)
              .starts_with(Db.Path + ": not an r3 campaign history"));
  // The refused file was not touched: still one table, still not WAL.
  sqlite3 *Raw = nullptr;
  REQUIRE(sqlite3_open(Db.Path.c_str(), &Raw) == SQLITE_OK);
  sqlite3_stmt *S = nullptr;
  REQUIRE(sqlite3_prepare_v2(Raw, "PRAGMA journal_mode", -1, &S, nullptr) ==
          SQLITE_OK);
  REQUIRE(sqlite3_step(S) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char *>(
            sqlite3_column_text(S, 0))) == "delete");
  sqlite3_finalize(S);
  sqlite3_close(Raw);

  TempDb Text("text.db");
  std::FILE *F = std::fopen(Text.Path.c_str(), "w");
  std::fputs("this is a campaign file, not a database, and it is long enough "
             "to hold a header of one hundred bytes or so; padding padding\n",
             F);
  std::fclose(F);
  std::string NotDb = openError(Text.Path, HistoryMode::ReadOnly);
  CHECK(NotDb.starts_with(Text.Path + ": "));
  CHECK(contains(NotDb, "not a database"));
}

TEST_CASE("history: every row type round-trips", "[history]") {
  TempDb Db("roundtrip.db");
  auto H = openOk(Db.Path, HistoryMode::Create);

  CHECK_FALSE(value(H->campaign()));
  ok(H->putCampaign({"c.toml", "[budget]\nevaluations = 9\n", "host",
                     0xfedcba9876543210ull, 1700000000.25, "running"}));
  ok(H->setCampaignState("interrupted"));
  auto C = value(H->campaign());
  REQUIRE(C);
  CHECK(C->Path == "c.toml");
  CHECK(C->Text == "[budget]\nevaluations = 9\n");
  CHECK(C->Backend == "host");
  CHECK(C->Seed == 0xfedcba9876543210ull);
  CHECK(C->Created == 1700000000.25);
  CHECK(C->State == "interrupted");

  int64_t K1 = addKernel(*H, "saxpy"), K2 = addKernel(*H, "stencil");
  CHECK(K1 != K2);
  CHECK(value(H->putKernel({0, "saxpy", "new.h5", "h2"})) == K1);
  auto Ks = value(H->kernels());
  REQUIRE(Ks.size() == 2);
  CHECK(Ks[0].Name == "saxpy");
  CHECK(Ks[0].Capture == "new.h5");
  CHECK(Ks[0].CaptureHash == "h2");
  CHECK(Ks[1].Id == K2);

  ok(H->putSource("abc", "__global__ void k() {}"));
  ok(H->putSource("abc", "ignored: the hash names its text"));
  CHECK(value(H->source("abc")) == "__global__ void k() {}");
  CHECK_FALSE(value(H->source("nope")));

  int64_t Recorded = addRecordedVariant(*H, K1);
  VariantRow V;
  V.KernelId = K1;
  V.GenomeKey = "f0:k1,2";
  V.GenomeJson = R"({"file":0,"knobs":[1,2]})";
  V.SourceHash = "abc";
  V.ParentsJson = "[" + std::to_string(Recorded) + "]";
  V.Operator = "knob";
  V.Island = 2;
  V.Created = 1700000003.5;
  auto VId = value(H->addVariant(V));
  REQUIRE(VId);
  auto Vs = value(H->variants(K1));
  REQUIRE(Vs.size() == 2);
  CHECK(Vs[0].SourceHash.empty());
  CHECK(Vs[1].Id == *VId);
  CHECK(Vs[1].GenomeKey == V.GenomeKey);
  CHECK(Vs[1].GenomeJson == V.GenomeJson);
  CHECK(Vs[1].SourceHash == "abc");
  CHECK(Vs[1].ParentsJson == V.ParentsJson);
  CHECK(Vs[1].Operator == "knob");
  CHECK(Vs[1].Island == 2);
  CHECK(Vs[1].Created == 1700000003.5);
  CHECK(value(H->variants(K2)).empty());

  CandidateRow Parent = candidate(K1, Recorded, "p");
  Parent.Level = "source";
  auto PId = value(H->addCandidate(Parent));
  REQUIRE(PId);
  CandidateRow Child = candidate(K1, *VId, "c");
  Child.ParentId = *PId;
  Child.Worker = 4;
  Child.State = CandidateState::Running;
  auto CId = value(H->addCandidate(Child));
  REQUIRE(CId);
  auto Got = value(H->candidateByIdentity("c"));
  REQUIRE(Got);
  CHECK(Got->Id == *CId);
  CHECK(Got->KernelId == K1);
  CHECK(Got->VariantId == *VId);
  CHECK(Got->Level == "compiler");
  CHECK(Got->Operator == "bo");
  CHECK(Got->ParentId == *PId);
  CHECK(Got->Point == Child.Point);
  CHECK(Got->PointJson == Child.PointJson);
  CHECK(Got->SettingsJson == Child.SettingsJson);
  CHECK(Got->State == CandidateState::Running);
  CHECK(Got->Worker == 4);
  CHECK(Got->Created == Child.Created);
  CHECK_FALSE(value(H->candidateByIdentity("p"))->ParentId);
  CHECK_FALSE(value(H->candidateByIdentity("missing")));

  EvaluationRow E = evaluation(*CId);
  int64_t EId = value(H->addEvaluation(E));
  auto Es = value(H->evaluations(K1));
  REQUIRE(Es.size() == 1);
  const EvaluationRow &R = Es[0].Evaluation;
  CHECK(Es[0].Candidate.Identity == "c");
  CHECK(Es[0].Candidate.State == CandidateState::Done);
  CHECK(R.Id == EId);
  CHECK(R.CandidateId == *CId);
  CHECK(R.Worker == 3);
  CHECK(R.Device == "host cpu");
  CHECK_FALSE(R.Result.Verified);
  CHECK(R.Result.Failure == FailureKind::WrongResult);
  CHECK(R.Result.Message == E.Result.Message);
  CHECK(R.Result.TimesNs == E.Result.TimesNs);
  CHECK(R.Result.CompileMs == 41.5);
  CHECK(R.Result.Registers == 32);
  CHECK(R.Result.Spills == 0);
  CHECK_FALSE(R.Result.SharedBytes);
  CHECK(R.Result.Pipeline == "default<O3>");
  CHECK(R.Result.CodegenOpt == 3);
  CHECK(R.Result.Poisoned);
  CHECK(R.Result.Sandbox == "landlock");
  CHECK(R.Result.LoadMs == 2.5); // version 5
  CHECK(R.Result.RestoreMs == 7.25);
  CHECK(R.Result.VerifyMs == 3.5); // version 6
  CHECK(R.MedianMs == E.MedianMs);
  CHECK(R.CiLoMs == E.CiLoMs);
  CHECK(R.CiHiMs == E.CiHiMs);
  CHECK(R.MinMs == E.MinMs);
  CHECK(R.EvalMs == E.EvalMs);
  CHECK(R.Started == E.Started);
  CHECK(R.Finished == E.Finished);
  CHECK(value(H->evaluations(K2)).empty());
  CHECK(value(H->evaluations()).size() == 1);
  CHECK(value(H->evaluationCount()) == 1);

  BaselineRow B{0, K2, 1, "host cpu", 2.5, 2.25, 2.75, 1700000004.0, 17};
  int64_t BId = value(H->addBaseline(B));
  auto Bs = value(H->baselines());
  REQUIRE(Bs.size() == 1);
  CHECK(Bs[0].Id == BId);
  CHECK(Bs[0].KernelId == K2);
  CHECK(Bs[0].Worker == 1);
  CHECK(Bs[0].Device == "host cpu");
  CHECK(Bs[0].MedianMs == 2.5);
  CHECK(Bs[0].CiLoMs == 2.25);
  CHECK(Bs[0].CiHiMs == 2.75);
  CHECK(Bs[0].Measured == 1700000004.0);
  CHECK(Bs[0].AfterEvaluations == 17);
  CHECK(value(H->baselines(K1)).empty());

  ok(H->putArchive(K1, {{K1, 0, 7, Recorded, 3.5, "[12,0]"},
                        {K1, 1, 2, *VId, 1.5, "[8,4]"}}));
  ok(H->putArchive(K1, {{K1, 1, 3, *VId, 1.25, "[9,4]"}}));
  auto A = value(H->archive(K1));
  REQUIRE(A.size() == 1);
  CHECK(A[0].KernelId == K1);
  CHECK(A[0].Island == 1);
  CHECK(A[0].Cell == 3);
  CHECK(A[0].VariantId == *VId);
  CHECK(A[0].Fitness == 1.25);
  CHECK(A[0].DescriptorJson == "[9,4]");

  CHECK_FALSE(value(H->lastEvent()));
  ok(H->addEvent("start", "c.toml"));
  ok(H->addEvent("budget", "9"));
  ok(H->addEvent("interrupt", "SIGTERM"));
  auto Last = value(H->lastEvent());
  REQUIRE(Last);
  CHECK(Last->Kind == "interrupt");
  CHECK(Last->Message == "SIGTERM");
  CHECK(Last->At > 1700000000);
  auto Budget = value(H->lastEvent("budget"));
  REQUIRE(Budget);
  CHECK(Budget->Message == "9");
  CHECK(Budget->Id < Last->Id);
}

TEST_CASE("history: a result without timed runs stores no times", "[history]") {
  TempDb Db("untimed.db");
  auto H = openOk(Db.Path, HistoryMode::Create);
  Fixture F = populate(*H);
  auto Id = value(H->addCandidate(candidate(F.Kernel, F.Variant, "x")));
  EvaluationRow E;
  E.CandidateId = *Id;
  E.Result = failedResult(FailureKind::CompileError, "error: expected ';'");
  value(H->addEvaluation(E));
  auto Es = value(H->evaluations());
  REQUIRE(Es.size() == 1);
  CHECK(Es[0].Evaluation.Result.Failure == FailureKind::CompileError);
  CHECK(Es[0].Evaluation.Result.Message == "error: expected ';'");
  CHECK(Es[0].Evaluation.Result.TimesNs.empty());
  CHECK_FALSE(Es[0].Evaluation.Result.Registers);
  CHECK(Es[0].Evaluation.MedianMs == 0);
}

TEST_CASE("history: identities and genome keys are unique", "[history]") {
  TempDb Db("unique.db");
  auto H = openOk(Db.Path, HistoryMode::Create);
  Fixture F = populate(*H);
  auto First = value(H->addCandidate(candidate(F.Kernel, F.Variant, "same")));
  REQUIRE(First);
  CandidateRow Again = candidate(F.Kernel, F.Variant, "same");
  Again.Level = "launch";
  CHECK_FALSE(value(H->addCandidate(Again)));
  CHECK(value(H->candidates()).size() == 1);
  CHECK(value(H->candidateByIdentity("same"))->Level == "compiler");

  VariantRow V;
  V.KernelId = F.Kernel;
  V.GenomeKey = "recorded";
  V.GenomeJson = "{}";
  V.Operator = "knob";
  CHECK_FALSE(value(H->addVariant(V)));
  V.KernelId = addKernel(*H, "other");
  CHECK(value(H->addVariant(V))); // the key is unique per kernel only

  // Other constraint failures are errors, not "exists already".
  Expected<std::optional<int64_t>> Bad =
      H->addCandidate(candidate(F.Kernel, 999, "dangling"));
  REQUIRE_FALSE(Bad);
  CHECK(contains(Bad.error().message(), "FOREIGN KEY"));
  CHECK(Bad.error().message().ends_with("(while adding a candidate)"));
}

TEST_CASE("history: a candidate is evaluated once", "[history]") {
  TempDb Db("twice.db");
  auto H = openOk(Db.Path, HistoryMode::Create);
  Fixture F = populate(*H);
  auto Id = value(H->addCandidate(candidate(F.Kernel, F.Variant, "once")));
  value(H->addEvaluation(evaluation(*Id)));
  Expected<int64_t> Second = H->addEvaluation(evaluation(*Id));
  REQUIRE_FALSE(Second);
  CHECK(Second.error().message() == Db.Path + ": candidate " +
                                        std::to_string(*Id) +
                                        " has an evaluation already");
  CHECK(value(H->evaluationCount()) == 1);

  Expected<int64_t> Unknown = H->addEvaluation(evaluation(12345));
  REQUIRE_FALSE(Unknown);
  CHECK(Unknown.error().message() ==
        Db.Path + ": no candidate 12345 for an evaluation");
  CHECK(value(H->evaluationCount()) == 1);
}

TEST_CASE("history: unfinished lists queued and running candidates",
          "[history]") {
  TempDb Db("unfinished.db");
  auto H = openOk(Db.Path, HistoryMode::Create);
  Fixture F = populate(*H);
  std::vector<int64_t> Ids;
  for (const char *Name : {"a", "b", "c", "d"})
    Ids.push_back(
        *value(H->addCandidate(candidate(F.Kernel, F.Variant, Name))));
  ok(H->setCandidateState(Ids[1], CandidateState::Running, 7));
  ok(H->setCandidateState(Ids[2], CandidateState::Dropped));
  value(H->addEvaluation(evaluation(Ids[3])));
  auto U = value(H->unfinished());
  REQUIRE(U.size() == 2);
  CHECK(U[0].Identity == "a");
  CHECK(U[0].State == CandidateState::Queued);
  CHECK_FALSE(U[0].Worker);
  CHECK(U[1].Identity == "b");
  CHECK(U[1].State == CandidateState::Running);
  CHECK(U[1].Worker == 7);
  CHECK(value(H->candidateByIdentity("c"))->State == CandidateState::Dropped);
  CHECK(value(H->candidateByIdentity("d"))->State == CandidateState::Done);
  Error NoSuch = H->setCandidateState(999, CandidateState::Done);
  REQUIRE(NoSuch);
  CHECK(contains(NoSuch.message(), "no candidate 999"));
}

TEST_CASE("history: a reader sees committed rows only", "[history]") {
  TempDb Db("reader.db");
  auto W = openOk(Db.Path, HistoryMode::Create);
  Fixture F = populate(*W);
  ok(W->begin());
  value(W->addCandidate(candidate(F.Kernel, F.Variant, "committed")));
  ok(W->commit());
  ok(W->begin());
  value(W->addCandidate(candidate(F.Kernel, F.Variant, "pending")));
  // The writer holds its transaction open while another connection reads.
  auto R = openOk(Db.Path, HistoryMode::ReadOnly);
  CHECK(identities(*R) == std::vector<std::string>{"committed"});
  CHECK(identities(*W) == std::vector<std::string>{"committed", "pending"});
  ok(W->commit());
  CHECK(identities(*R) == std::vector<std::string>{"committed", "pending"});
}

TEST_CASE("history: a rollback loses only the uncommitted batch", "[history]") {
  TempDb Db("rollback.db");
  auto H = openOk(Db.Path, HistoryMode::Create);
  Fixture F = populate(*H);
  ok(H->begin());
  value(H->addCandidate(candidate(F.Kernel, F.Variant, "kept")));
  ok(H->commit());
  ok(H->begin());
  auto Lost = value(H->addCandidate(candidate(F.Kernel, F.Variant, "lost")));
  value(H->addEvaluation(evaluation(*Lost)));
  ok(H->rollback());
  CHECK(identities(*H) == std::vector<std::string>{"kept"});
  CHECK(value(H->evaluationCount()) == 0);
  // The identity is free again.
  CHECK(value(H->addCandidate(candidate(F.Kernel, F.Variant, "lost"))));
}

TEST_CASE("history: a killed writer loses only its open transaction",
          "[history]") {
  TempDb Db("killed.db");
  { openOk(Db.Path, HistoryMode::Create); }
  pid_t Child = ::fork();
  REQUIRE(Child >= 0);
  if (Child == 0) {
    // No Catch2 assertions here: any failure exits with a distinct code.
    auto H = History::open(Db.Path, HistoryMode::Open);
    if (!H)
      ::_exit(2);
    Fixture F = populate(**H);
    if ((*H)->begin())
      ::_exit(3);
    auto A = (*H)->addCandidate(candidate(F.Kernel, F.Variant, "durable"));
    if (!A || !*A || !(*H)->addEvaluation(evaluation(**A)))
      ::_exit(4);
    // Dispatched to worker 2, committed, never evaluated: what a resume
    // must run again.
    auto D = (*H)->addCandidate(candidate(F.Kernel, F.Variant, "dispatched"));
    if (!D || !*D || (*H)->setCandidateState(**D, CandidateState::Running, 2) ||
        !(*H)->addCandidate(candidate(F.Kernel, F.Variant, "queued")) ||
        (*H)->commit())
      ::_exit(8);
    if ((*H)->begin())
      ::_exit(5);
    auto B = (*H)->addCandidate(candidate(F.Kernel, F.Variant, "in flight"));
    if (!B || !*B || !(*H)->addEvaluation(evaluation(**B)))
      ::_exit(6);
    ::kill(::getpid(), SIGKILL);
    ::_exit(7);
  }
  int Status = 0;
  REQUIRE(::waitpid(Child, &Status, 0) == Child);
  INFO("child status " << Status);
  REQUIRE(WIFSIGNALED(Status));
  CHECK(WTERMSIG(Status) == SIGKILL);
  // A reader sees the committed batch before anyone reopens the file.
  {
    auto R = openOk(Db.Path, HistoryMode::ReadOnly);
    CHECK(value(R->evaluationCount()) == 1);
  }
  auto H = openOk(Db.Path, HistoryMode::Open);
  CHECK(identities(*H) ==
        std::vector<std::string>{"durable", "dispatched", "queued"});
  auto Es = value(H->evaluations());
  REQUIRE(Es.size() == 1);
  CHECK(Es[0].Candidate.Identity == "durable");
  auto U = value(H->unfinished());
  REQUIRE(U.size() == 2);
  CHECK(U[0].Identity == "dispatched");
  CHECK(U[0].State == CandidateState::Running);
  CHECK(U[0].Worker == 2);
  CHECK(U[1].Identity == "queued");
  CHECK(U[1].State == CandidateState::Queued);
  // The rerun's evaluation completes it.
  value(H->addEvaluation(evaluation(U[0].Id)));
  CHECK(value(H->unfinished()).size() == 1);
}

TEST_CASE("history: LLM calls and their prompts", "[history][llm]") {
  TempDb Db("llm.db");
  auto H = openOk(Db.Path, HistoryMode::Create);
  int64_t K = addKernel(*H);
  REQUIRE_FALSE(H->putPrompt("p1", "rewrite the kernel"));
  REQUIRE_FALSE(H->putPrompt("p1", "ignored: the hash is stored once"));
  LlmCallRow C;
  C.KernelId = K;
  C.Model = "m-small";
  C.PromptHash = "p1";
  C.TokensIn = 1200;
  C.TokensOut = 345;
  C.LatencyMs = 812.5;
  C.Attempts = 2;
  C.HttpStatus = 200;
  C.Outcome = "llm_invalid";
  C.Reason = "the reply changes the kernel's signature";
  C.Reply = "```c\nvoid f(int) {}\n```";
  C.Started = 10;
  C.Finished = 11;
  int64_t Id = value(H->addLlmCall(C));
  C.Outcome = "bogus";
  Expected<int64_t> Bad = H->addLlmCall(C);
  REQUIRE_FALSE(Bad);
  CHECK(contains(Bad.error().message(), "CHECK constraint failed"));
  auto Calls = value(H->llmCalls(K));
  REQUIRE(Calls.size() == 1);
  CHECK(Calls[0].Id == Id);
  CHECK(Calls[0].Model == "m-small");
  CHECK(Calls[0].TokensIn == 1200);
  CHECK(Calls[0].TokensOut == 345);
  CHECK(Calls[0].Attempts == 2);
  CHECK(Calls[0].HttpStatus == 200);
  CHECK_FALSE(Calls[0].VariantId);
  CHECK(Calls[0].Reason == "the reply changes the kernel's signature");
  CHECK(value(H->prompt("p1")) ==
        std::optional<std::string>("rewrite the kernel"));
  CHECK(value(H->llmCalls(K + 1)).empty());
}

TEST_CASE("history: a version 1 history is read as it is and migrated by a "
          "writer",
          "[history][llm]") {
  TempDb Db("v1.db");
  {
    auto H = openOk(Db.Path, HistoryMode::Create);
    addKernel(*H);
  }
  // What a version 1 file looks like: no prompts, no llm_calls, none of
  // version 3's, 5's or 6's columns, no app_runs.
  rawSql(Db.Path, "DROP TABLE llm_calls; DROP TABLE prompts; "
                  "DROP TABLE app_runs; "
                  "ALTER TABLE evaluations DROP COLUMN timer; "
                  "ALTER TABLE evaluations DROP COLUMN event_times_ms; "
                  "ALTER TABLE evaluations DROP COLUMN busy_ms; "
                  "ALTER TABLE evaluations DROP COLUMN load_ms; "
                  "ALTER TABLE evaluations DROP COLUMN restore_ms; "
                  "ALTER TABLE evaluations DROP COLUMN verify_ms; "
                  "ALTER TABLE baselines DROP COLUMN busy_ms; "
                  "ALTER TABLE baselines DROP COLUMN started; "
                  "PRAGMA user_version = 1");
  {
    auto R = openOk(Db.Path, HistoryMode::ReadOnly);
    CHECK(value(R->schemaVersion()) == 1);
    CHECK(value(R->llmCalls()).empty());
    CHECK(value(R->kernels()).size() == 1);
    CHECK(value(R->evaluations()).empty()); // read without version 3's columns
    CHECK(value(R->baselines()).empty());
    CHECK(value(R->appRuns()).empty());
  }
  CHECK(rawText(Db.Path, "PRAGMA user_version") == "1");
  auto H = openOk(Db.Path, HistoryMode::Open);
  CHECK(value(H->schemaVersion()) == HistorySchemaVersion);
  REQUIRE_FALSE(H->putPrompt("p", "t"));
  LlmCallRow C;
  C.KernelId = value(H->kernels()).front().Id;
  C.PromptHash = "p";
  C.Outcome = "ok";
  value(H->addLlmCall(C));
  CHECK(value(H->llmCalls()).size() == 1);
  // Version 4's table: the application's runs end to end.
  AppRunRow Run;
  Run.Variant = "tuned";
  Run.WallSeconds = 1.5;
  Run.CommandJson = "[\"./app\"]";
  value(H->addAppRun(Run));
  Run.Variant = "sometimes";
  CHECK_FALSE(H->addAppRun(Run)); // the schema allows two variants
  auto Runs = value(H->appRuns());
  REQUIRE(Runs.size() == 1);
  CHECK(Runs[0].Variant == "tuned");
  CHECK(Runs[0].WallSeconds == 1.5);
}
