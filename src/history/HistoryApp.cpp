// The history's record of the application's own runs, end to end (schema
// version 4): what `r3 tune --app` measured after its campaign, so that
// `r3 report` can set the measured end-to-end speedup beside the predicted
// one. A history of an older version opened for reading has none.
#include "history/History.h"
#include "history/HistorySql.h"

namespace r3 {

using namespace detail;

Expected<int64_t> History::addAppRun(const AppRunRow &R) {
  Statement S(Db, Path, "adding a run of the application");
  R3_TRY(S.prepare("INSERT INTO app_runs (at, variant, wall_s, exit_code, "
                   "command) VALUES (?, ?, ?, ?, ?)"));
  R3_TRY(
      S.bind(R.At, R.Variant, R.WallSeconds, int64_t(R.ExitCode), R.CommandJson)
          .run());
  return sqlite3_last_insert_rowid(Db);
}

Expected<std::vector<AppRunRow>> History::appRuns() {
  if (Version < 4)
    return std::vector<AppRunRow>();
  Statement S(Db, Path, "reading the application's runs");
  R3_TRY(S.prepare("SELECT id, at, variant, wall_s, exit_code, command FROM "
                   "app_runs ORDER BY id"));
  return collect<AppRunRow>(S, [](const Statement &S, AppRunRow &R) {
    R.Id = S.integer(0);
    R.At = S.real(1);
    R.Variant = S.text(2);
    R.WallSeconds = S.real(3);
    R.ExitCode = static_cast<int>(S.integer(4));
    R.CommandJson = S.text(5);
    return Error::success();
  });
}

} // namespace r3
