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
#include <unordered_map>
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

/// The prepared statements of one connection kept for reuse, by the address
/// of their SQL text (a literal: the same statement has the same address).
/// A campaign commits thousands of results a second, and preparing each
/// statement again was a third of the coordinator's time.
class StatementCache {
public:
  explicit StatementCache(sqlite3 *Db) : Db(Db) {}
  ~StatementCache() {
    for (auto &[Sql, S] : Free)
      sqlite3_finalize(S);
  }
  StatementCache(const StatementCache &) = delete;
  StatementCache &operator=(const StatementCache &) = delete;
  sqlite3 *db() const { return Db; }
  /// A statement prepared from Sql before and not in use, or null.
  sqlite3_stmt *take(const char *Sql) {
    auto It = Free.find(Sql);
    if (It == Free.end())
      return nullptr;
    sqlite3_stmt *S = It->second;
    Free.erase(It);
    return S;
  }
  /// Back after use: reset, unbound, ready for the next take.
  void give(const char *Sql, sqlite3_stmt *S) {
    sqlite3_reset(S);
    sqlite3_clear_bindings(S);
    if (!Free.emplace(Sql, S).second)
      sqlite3_finalize(S); // the same statement twice at once: keep one
  }

private:
  sqlite3 *Db;
  std::unordered_map<const char *, sqlite3_stmt *> Free;
};

/// One prepared statement: bind, step, read columns; finalized on scope exit
/// (or, made from a cache, given back to it).
class Statement {
public:
  Statement(sqlite3 *Db, const std::string &Path, const char *What)
      : Db(Db), Path(Path), What(What) {}
  Statement(StatementCache &Cache, const std::string &Path, const char *What)
      : Db(Cache.db()), Path(Path), What(What), Cache(&Cache) {}
  ~Statement() {
    if (Cache && S)
      Cache->give(Sql, S);
    else
      sqlite3_finalize(S);
  }
  Statement(const Statement &) = delete;
  Statement &operator=(const Statement &) = delete;

  /// Sql must outlive the cache the statement came from (a literal).
  Error prepare(const char *Sql) {
    this->Sql = Sql;
    if (Cache && (S = Cache->take(Sql)))
      return Error::success();
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
  StatementCache *Cache = nullptr;
  const char *Sql = nullptr;
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
