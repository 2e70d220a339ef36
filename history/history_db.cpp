#include "history/history_db.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "model/pci_address.hpp"
#include "report/results_writer.hpp"

namespace pcieval {

namespace {

// Long enough for a concurrent run's transaction (milliseconds) to finish,
// short enough that a stuck writer does not hang a Slurm health check.
constexpr int kBusyTimeoutMs = 5000;

// user_version 1. started_s is what runs are ordered by; started_utc is
// there for a person reading the database with the sqlite3 shell.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  started_s   REAL NOT NULL,
  started_utc TEXT NOT NULL,
  host        TEXT NOT NULL,
  overall     TEXT NOT NULL,
  summary     TEXT NOT NULL,
  document    TEXT NOT NULL
);
CREATE INDEX runs_by_time ON runs (started_s);
CREATE INDEX runs_by_host ON runs (host, started_s);
CREATE TABLE measurements (
  run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  subject     TEXT NOT NULL,
  probe       TEXT NOT NULL,
  direction   TEXT NOT NULL,
  size_bytes  INTEGER NOT NULL,
  median_gbps REAL NOT NULL
);
CREATE INDEX measurements_by_subject ON measurements (subject, probe, direction, run_id);
CREATE INDEX measurements_by_run ON measurements (run_id);
PRAGMA user_version = 1;
)sql";

struct Finalizer {
  void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
};
using Statement = std::unique_ptr<sqlite3_stmt, Finalizer>;

Error db_error(sqlite3* db, const std::string& path, const std::string& doing) {
  const int code = sqlite3_errcode(db);
  const std::string reason = sqlite3_errmsg(db);
  if (code == SQLITE_NOTADB) return make_error(path + " is not an SQLite database (" + reason + ")");
  if (code == SQLITE_CORRUPT) return make_error(path + " is corrupt (" + reason + ")");
  if (sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK) {
    return make_error("history " + path + " holds the journal of a writer that stopped mid-transaction (" + path +
                      "-journal); rolling it back needs write access to the file and its folder");
  }
  return make_error("history " + path + ": " + doing + ": " + reason);
}

Result<Statement> prepare(sqlite3* db, const std::string& path, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    return db_error(db, path, "preparing a query");
  }
  return Statement(raw);
}

Status exec(sqlite3* db, const std::string& path, const char* sql, const std::string& doing) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return db_error(db, path, doing);
  return ok_status();
}

Result<int> query_int(sqlite3* db, const std::string& path, const char* sql) {
  auto statement = prepare(db, path, sql);
  if (!statement) return statement.error();
  const int step = sqlite3_step(statement->get());
  if (step == SQLITE_ROW) return sqlite3_column_int(statement->get(), 0);
  if (step == SQLITE_DONE) return 0;
  return db_error(db, path, "reading the schema");
}

// A transaction that rolls back unless committed, so every early return of
// append() leaves the database as it was.
class Transaction {
 public:
  // BEGIN IMMEDIATE (the default) takes the write lock now (waiting up to
  // the busy timeout), not at the first insert, where a deferred transaction
  // could fail with SQLITE_BUSY halfway through. A reader passes "BEGIN".
  static Result<Transaction> begin(sqlite3* db, const std::string& path, const char* begin_sql = "BEGIN IMMEDIATE") {
    if (auto begun = exec(db, path, begin_sql, "starting a transaction"); !begun) return begun.error();
    return Transaction(db);
  }
  Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (db_ != nullptr) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

  Status commit(const std::string& path) {
    if (auto committed = exec(db_, path, "COMMIT", "committing"); !committed) return committed;
    db_ = nullptr;
    return ok_status();
  }

 private:
  explicit Transaction(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

std::string column_text(sqlite3_stmt* statement, int column) {
  const unsigned char* text = sqlite3_column_text(statement, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

void bind_text(sqlite3_stmt* statement, int index, const std::string& text) {
  sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

// Subject filter and limit, bound the same way for runs() and points().
void bind_query(sqlite3_stmt* statement, const HistoryQuery& query) {
  if (query.subject) bind_text(statement, 1, *query.subject);
  sqlite3_bind_int(statement, 2, query.limit ? *query.limit : -1);  // LIMIT -1: no limit
}

}  // namespace

std::string utc_timestamp(double seconds_since_epoch) {
  const auto whole = static_cast<std::time_t>(seconds_since_epoch);
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

HistoryRecord history_record_of(const Results& results, double started_s) {
  HistoryRecord record;
  record.started_s = started_s;
  record.host = results.evidence.host.hostname;
  record.overall = std::string(to_string(results.overall));
  record.summary = results.summary;
  record.document_json = results_to_json(results);
  for (const Measurement& m : results.evidence.measurements) {
    // One GPU, or the host: a group's total ("all gpus", "port ...") is kept
    // in the document only.
    const bool one_gpu = m.gpus.size() <= 1 && parse_pci_address(m.subject).ok();
    const bool host = m.gpus.empty() && m.direction == Direction::kHostToHost;
    if (!one_gpu && !host) continue;
    record.measurements.push_back(
        HistoryMeasurement{m.subject, m.probe, std::string(to_string(m.direction)), m.size_bytes, m.stats.median_gbps});
  }
  return record;
}

void HistoryDb::Closer::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

HistoryDb::HistoryDb(std::unique_ptr<sqlite3, Closer> db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {}

namespace {

// How `history` (Mode::kReadOnly) opens an existing file. Read-write when
// this process may write both the file and its folder: a writer killed
// mid-transaction leaves a hot journal, which SQLite must roll back (write
// the saved pages back, delete the journal) before anyone can read, and a
// read-only connection can only fail with "attempt to write a readonly
// database". No SQLITE_OPEN_CREATE, so a file removed meanwhile is never
// recreated, and PRAGMA query_only keeps every statement of the connection
// from writing; the rollback is the pager's, below SQL.
int read_flags(const std::string& path) {
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(folder.c_str(), W_OK) == 0;
  return writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
}

// PRAGMA quick_check(1): "ok", or the first problem found. quick_check, not
// integrity_check: it reads every page and checks every b-tree, cell,
// overflow chain and the freelist, which is what damaged pages break, in
// time linear in the file; integrity_check adds the cross-check of each
// index against its table (a logic error, not damage) at O(N log N), and
// would slow every append of a years-long history for no damage it alone
// finds.
Status check_pages(sqlite3* db, const std::string& path) {
  auto statement = prepare(db, path, "PRAGMA quick_check(1)");
  if (!statement) return statement.error();
  const int step = sqlite3_step(statement->get());
  if (step != SQLITE_ROW) return db_error(db, path, "checking the pages");
  std::string verdict = column_text(statement->get(), 0);
  if (verdict == "ok") return ok_status();
  // "*** in database main ***\nOn tree page 84 cell 0: ...": errors are one
  // line, and there is only the one database.
  constexpr std::string_view kHeader = "*** in database main ***\n";
  if (verdict.starts_with(kHeader)) verdict.erase(0, kHeader.size());
  std::replace(verdict.begin(), verdict.end(), '\n', ' ');
  return make_error(path + " is corrupt (quick_check: " + verdict + ")");
}

// Reads the schema and, for kAppend on an empty database, creates it, all in
// one transaction. Outside one, a creator that read user_version 0 before a
// concurrent creator committed would then count that one's tables and call
// the file another program's database (issue 29: 2 of 21 rounds lost a run).
// kAppend takes the write lock first (BEGIN IMMEDIATE, waiting up to the busy
// timeout), so a second creator waits and then sees the schema whole; a
// reader's deferred transaction sees a commit whole or not at all. The
// pages are checked before anything is written: a corrupt history is
// refused with its bytes as they were.
Status verify_schema(sqlite3* db, const std::string& path, HistoryDb::Mode mode) {
  auto transaction = Transaction::begin(db, path, mode == HistoryDb::Mode::kAppend ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!transaction) return transaction.error();
  // The first read of the file: SQLite reports a file that is not a database
  // here, before anything was written to it.
  auto version = query_int(db, path, "PRAGMA user_version");
  if (!version) return version.error();
  if (*version > kHistorySchemaVersion) {
    return make_error("history " + path + " was written by a newer pcieval (schema " + std::to_string(*version) +
                      ", this one knows up to " + std::to_string(kHistorySchemaVersion) + ")");
  }
  // Reading the schema parses page 1: a corrupt one shows here.
  auto tables = query_int(db, path, "SELECT count(*) FROM sqlite_master");
  if (!tables) return tables.error();
  if (*version == 0) {
    if (*tables > 0) return make_error(path + " is an SQLite database but not a pcieval history");
    if (mode == HistoryDb::Mode::kAppend) {
      if (auto created = exec(db, path, kSchemaV1, "creating the schema"); !created) return created;
    }
  } else if (auto pages = check_pages(db, path); !pages) {
    return pages;
  }
  return transaction.value().commit(path);
}

}  // namespace

Result<HistoryDb> HistoryDb::open(const std::string& path, Mode mode) {
  std::error_code error;
  if (mode == Mode::kReadOnly && !std::filesystem::exists(path, error)) {
    return make_error("no history database at " + path + " (check --history writes one)");
  }
  if (std::filesystem::is_directory(path, error)) return make_error("history " + path + " is a directory");
  if (mode == Mode::kAppend) {
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (!folder.empty() && !std::filesystem::create_directories(folder, error) && error) {
      return make_error("cannot create the folder of history " + path + ": " + error.message());
    }
  }
  sqlite3* raw = nullptr;
  const int flags = mode == Mode::kReadOnly ? read_flags(path) : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int opened = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (opened != SQLITE_OK) {
    if (raw == nullptr) return make_error("cannot open history " + path + ": out of memory");
    return db_error(raw, path, "opening");
  }
  sqlite3_extended_result_codes(raw, 0);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  if (mode == Mode::kReadOnly) {
    if (auto query_only = exec(raw, path, "PRAGMA query_only = ON", "opening for reading"); !query_only) {
      return query_only.error();
    }
  }
  // Outside any transaction: inside one this pragma does nothing.
  if (auto fk = exec(raw, path, "PRAGMA foreign_keys = ON", "enabling foreign keys"); !fk) return fk.error();
  if (auto verified = verify_schema(raw, path, mode); !verified) return verified.error();
  return HistoryDb(std::move(db), path);
}

Result<std::int64_t> HistoryDb::append(const HistoryRecord& record) {
  sqlite3* db = db_.get();
  auto transaction = Transaction::begin(db, path_);
  if (!transaction) return transaction.error();

  auto run = prepare(db, path_,
                     "INSERT INTO runs (started_s, started_utc, host, overall, summary, document) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!run) return run.error();
  sqlite3_bind_double(run->get(), 1, record.started_s);
  bind_text(run->get(), 2, utc_timestamp(record.started_s));
  bind_text(run->get(), 3, record.host);
  bind_text(run->get(), 4, record.overall);
  bind_text(run->get(), 5, record.summary);
  bind_text(run->get(), 6, record.document_json);
  if (sqlite3_step(run->get()) != SQLITE_DONE) return db_error(db, path_, "adding the run");
  const std::int64_t run_id = sqlite3_last_insert_rowid(db);

  auto measurement = prepare(db, path_,
                             "INSERT INTO measurements (run_id, subject, probe, direction, size_bytes, median_gbps) "
                             "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!measurement) return measurement.error();
  sqlite3_stmt* insert = measurement->get();
  for (const HistoryMeasurement& m : record.measurements) {
    sqlite3_reset(insert);
    sqlite3_bind_int64(insert, 1, run_id);
    bind_text(insert, 2, m.subject);
    bind_text(insert, 3, m.probe);
    bind_text(insert, 4, m.direction);
    sqlite3_bind_int64(insert, 5, static_cast<sqlite3_int64>(m.size_bytes));
    sqlite3_bind_double(insert, 6, m.median_gbps);
    if (sqlite3_step(insert) != SQLITE_DONE) return db_error(db, path_, "adding a measurement");
  }
  if (auto committed = transaction.value().commit(path_); !committed) return committed.error();
  return run_id;
}

namespace {

// The newest runs the query selects (with the subject filter as ?1 and the
// limit as ?2), for runs() and, as a subquery, points().
constexpr const char* kSelectedRunsAll = "SELECT id FROM runs ORDER BY started_s DESC, id DESC LIMIT ?2";
constexpr const char* kSelectedRunsOfSubject =
    "SELECT id FROM runs WHERE id IN (SELECT run_id FROM measurements WHERE subject = ?1) "
    "ORDER BY started_s DESC, id DESC LIMIT ?2";

// Runs `sql` (a query over kSelectedRuns*) with the query's parameters bound
// and hands each row to `read`; `doing` names the step in an error
// ("listing runs").
template <class Read>
Status each_row(sqlite3* db, const std::string& path, const std::string& sql, const HistoryQuery& query,
                const std::string& doing, Read read) {
  auto statement = prepare(db, path, sql.c_str());
  if (!statement) return statement.error();
  bind_query(statement->get(), query);
  int step = 0;
  while ((step = sqlite3_step(statement->get())) == SQLITE_ROW) read(statement->get());
  if (step != SQLITE_DONE) return db_error(db, path, doing);
  return ok_status();
}

}  // namespace

Result<std::vector<HistoryRun>> HistoryDb::runs(const HistoryQuery& query) const {
  std::vector<HistoryRun> runs;
  if (query_int(db_.get(), path_, "PRAGMA user_version").value_or(0) == 0) return runs;  // an empty file
  const std::string sql = std::string("SELECT id, started_s, host, overall, summary FROM runs WHERE id IN (") +
                          (query.subject ? kSelectedRunsOfSubject : kSelectedRunsAll) +
                          ") ORDER BY started_s DESC, id DESC";
  const Status listed = each_row(db_.get(), path_, sql, query, "listing runs", [&runs](sqlite3_stmt* row) {
    runs.push_back(HistoryRun{sqlite3_column_int64(row, 0), sqlite3_column_double(row, 1), column_text(row, 2),
                              column_text(row, 3), column_text(row, 4)});
  });
  if (!listed) return listed.error();
  return runs;
}

Result<std::vector<HistoryPoint>> HistoryDb::points(const HistoryQuery& query) const {
  std::vector<HistoryPoint> points;
  if (query_int(db_.get(), path_, "PRAGMA user_version").value_or(0) == 0) return points;
  const std::string sql =
      std::string(
          "SELECT r.id, r.started_s, r.host, m.subject, m.probe, m.direction, m.size_bytes, m.median_gbps "
          "FROM measurements m JOIN runs r ON r.id = m.run_id WHERE r.id IN (") +
      (query.subject ? kSelectedRunsOfSubject : kSelectedRunsAll) + ")" + (query.subject ? " AND m.subject = ?1" : "") +
      " ORDER BY r.started_s, r.id, m.subject, m.probe, m.direction, m.size_bytes";
  const Status read = each_row(db_.get(), path_, sql, query, "reading measurements", [&points](sqlite3_stmt* row) {
    HistoryPoint point;
    point.run_id = sqlite3_column_int64(row, 0);
    point.started_s = sqlite3_column_double(row, 1);
    point.host = column_text(row, 2);
    point.measurement =
        HistoryMeasurement{column_text(row, 3), column_text(row, 4), column_text(row, 5),
                           static_cast<std::uint64_t>(sqlite3_column_int64(row, 6)), sqlite3_column_double(row, 7)};
    points.push_back(std::move(point));
  });
  if (!read) return read.error();
  return points;
}

Result<std::string> HistoryDb::document(std::int64_t id) const {
  auto statement = prepare(db_.get(), path_, "SELECT document FROM runs WHERE id = ?1");
  if (!statement) return statement.error();
  sqlite3_bind_int64(statement->get(), 1, id);
  const int step = sqlite3_step(statement->get());
  if (step == SQLITE_ROW) return column_text(statement->get(), 0);
  if (step == SQLITE_DONE) return make_error("history " + path_ + " has no run " + std::to_string(id));
  return db_error(db_.get(), path_, "reading a document");
}

}  // namespace pcieval
