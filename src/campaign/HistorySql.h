// Internal to the history (History*.cpp): SQLite's C API wrapped once. Every
// statement is prepared with bound parameters; every SQLite failure becomes
// "PATH: sqlite's message (while doing X)".
#pragma once

#include "support/Error.h"

#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace r3::detail {

inline Error sqliteError(sqlite3 *Db, const std::string &Path,
                         const char *What) {
  return makeError(Path, ": ", sqlite3_errmsg(Db), " (while ", What, ")");
}

/// Runs SQL without parameters (schema, pragmas, transaction control).
inline Error execute(sqlite3 *Db, const std::string &Path, const char *Sql,
                     const char *What) {
  if (sqlite3_exec(Db, Sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    return sqliteError(Db, Path, What);
  return Error::success();
}

/// One prepared statement: bind, step, read columns; finalized on scope exit.
class Statement {
public:
  Statement(sqlite3 *Db, const std::string &Path, const char *What)
      : Db(Db), Path(Path), What(What) {}
  ~Statement() { sqlite3_finalize(S); }
  Statement(const Statement &) = delete;
  Statement &operator=(const Statement &) = delete;

  Error prepare(const char *Sql) {
    if (sqlite3_prepare_v2(Db, Sql, -1, &S, nullptr) != SQLITE_OK)
      return error();
    return Error::success();
  }
  /// Binds the values to parameters 1, 2, ... in order.
  template <typename... Ts> Statement &bind(const Ts &...Values) {
    int I = 0;
    (bindOne(++I, Values), ...);
    return *this;
  }
  /// Steps once: true when a row is ready.
  Expected<bool> step() {
    if (BindRc != SQLITE_OK)
      return makeError(Path, ": ", sqlite3_errstr(BindRc), " (while ", What,
                       ")");
    int Rc = sqlite3_step(S);
    if (Rc == SQLITE_ROW)
      return true;
    if (Rc == SQLITE_DONE)
      return false;
    return error();
  }
  /// Steps to the end (a statement that returns no rows).
  Error run() {
    Expected<bool> Row = step();
    while (Row && *Row)
      Row = step();
    return Row.takeError();
  }
  Error error() const { return sqliteError(Db, Path, What); }
  const std::string &path() const { return Path; }
  int extendedCode() const { return sqlite3_extended_errcode(Db); }

  bool isNull(int C) const { return sqlite3_column_type(S, C) == SQLITE_NULL; }
  int64_t integer(int C) const { return sqlite3_column_int64(S, C); }
  double real(int C) const { return sqlite3_column_double(S, C); }
  std::string text(int C) const {
    const unsigned char *T = sqlite3_column_text(S, C);
    return T ? std::string(reinterpret_cast<const char *>(T),
                           sqlite3_column_bytes(S, C))
             : std::string();
  }
  std::optional<int64_t> optInteger(int C) const {
    return isNull(C) ? std::nullopt : std::optional<int64_t>(integer(C));
  }

private:
  void check(int Rc) {
    if (BindRc == SQLITE_OK)
      BindRc = Rc;
  }
  template <std::integral T> void bindOne(int I, T V) {
    check(sqlite3_bind_int64(S, I, static_cast<sqlite3_int64>(V)));
  }
  void bindOne(int I, double V) { check(sqlite3_bind_double(S, I, V)); }
  void bindOne(int I, std::string_view V) {
    check(sqlite3_bind_text(S, I, V.data(), static_cast<int>(V.size()),
                            SQLITE_TRANSIENT));
  }
  void bindOne(int I, std::nullptr_t) { check(sqlite3_bind_null(S, I)); }
  template <typename T> void bindOne(int I, const std::optional<T> &V) {
    if (V)
      bindOne(I, *V);
    else
      bindOne(I, nullptr);
  }

  sqlite3 *Db;
  const std::string &Path;
  const char *What;
  sqlite3_stmt *S = nullptr;
  int BindRc = SQLITE_OK;
};

/// Every row of a prepared statement, read by Read(Statement, Row&).
template <typename Row, typename ReadFn>
Expected<std::vector<Row>> collect(Statement &S, ReadFn Read) {
  std::vector<Row> Rows;
  while (true) {
    Expected<bool> More = S.step();
    if (!More)
      return More.takeError();
    if (!*More)
      return Rows;
    if (Error E = Read(S, Rows.emplace_back()))
      return std::move(E).context(S.path());
  }
}

/// The first row, or none.
template <typename Row, typename ReadFn>
Expected<std::optional<Row>> first(Statement &S, ReadFn Read) {
  Expected<bool> More = S.step();
  if (!More)
    return More.takeError();
  if (!*More)
    return std::optional<Row>();
  Row R;
  if (Error E = Read(S, R))
    return std::move(E).context(S.path());
  return std::optional<Row>(std::move(R));
}

/// The integer in the first column of the first row of a query.
inline Expected<int64_t> queryInteger(sqlite3 *Db, const std::string &Path,
                                      const char *Sql, const char *What) {
  Statement S(Db, Path, What);
  R3_TRY(S.prepare(Sql));
  Expected<bool> Row = S.step();
  if (!Row)
    return Row.takeError();
  return *Row ? S.integer(0) : int64_t(0);
}

} // namespace r3::detail
