// Run history: every judged run appended to an SQLite database with its whole
// results document, plus indexed columns for listing runs and one row per
// single-subject measurement, so `pcieval history` can show a link whose
// bandwidth sinks a little every week.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/result.hpp"
#include "model/results.hpp"

struct sqlite3;

namespace pcieval {

// The schema this pcieval writes (PRAGMA user_version). Bump when a table or
// column changes, and teach open() to migrate the versions before it.
inline constexpr int kHistorySchemaVersion = 1;

// One measurement of one subject (a GPU address, or "numa0" for the host
// ceiling) as stored for trends.
struct HistoryMeasurement {
  std::string subject;
  std::string probe;      // registry key, "h2d_ce"
  std::string direction;  // "h2d", "d2h", "h2h"
  std::uint64_t size_bytes = 0;
  double median_gbps = 0;
};

// "2026-12-03T12:40:05Z": how history shows a run's start.
[[nodiscard]] std::string utc_timestamp(double seconds_since_epoch);

// What one run adds to the database.
struct HistoryRecord {
  double started_s = 0;  // seconds since the Unix epoch
  std::string host;
  std::string overall;  // "pass", "fail", "inconclusive"
  std::string summary;
  std::string document_json;  // the results document, whole
  std::vector<HistoryMeasurement> measurements;
};

// The record of a judged run: the document as results_to_json writes it and
// every measurement with a single subject (group totals have no one subject
// to follow over time and stay in the document only).
[[nodiscard]] HistoryRecord history_record_of(const Results& results, double started_s);

// A run as listed.
struct HistoryRun {
  std::int64_t id = 0;
  double started_s = 0;
  std::string host;
  std::string overall;
  std::string summary;
};

// One measurement of one subject in one run, for trends.
struct HistoryPoint {
  std::int64_t run_id = 0;
  double started_s = 0;
  std::string host;
  HistoryMeasurement measurement;
};

struct HistoryQuery {
  std::optional<std::string> subject;  // only this GPU (or host subject)
  std::optional<int> limit;            // the newest N runs; all when nullopt
};

// An open history database. Move-only; closes the connection on destruction.
class HistoryDb {
 public:
  enum class Mode {
    kAppend,  // create the file (and its folder) when missing
    // The file must exist and is never created. No statement writes; only a
    // crashed writer's hot journal is rolled back, which needs write access
    // to the file and its folder (without it, an error names the journal).
    kReadOnly,
  };

  // Opens `path` and checks that it is an SQLite database whose schema this
  // pcieval knows and whose pages are sound (PRAGMA quick_check). A file that
  // is not SQLite, is corrupt, is another program's database or was written
  // by a newer schema is an error, and the file is left untouched. The
  // checks and, on a database that reads as empty, the creation of the
  // schema run in one transaction (BEGIN IMMEDIATE for kAppend), so runs
  // creating one new database at once each see it either absent or whole.
  [[nodiscard]] static Result<HistoryDb> open(const std::string& path, Mode mode);

  HistoryDb(HistoryDb&&) noexcept = default;
  HistoryDb& operator=(HistoryDb&&) noexcept = default;
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;
  ~HistoryDb() = default;

  // Appends the run and its measurements in one transaction (BEGIN
  // IMMEDIATE ... COMMIT): on any failure everything is rolled back and the
  // database is as it was. Returns the new run's id.
  [[nodiscard]] Result<std::int64_t> append(const HistoryRecord& record);

  // Runs, newest first; with a subject, only runs that measured it.
  [[nodiscard]] Result<std::vector<HistoryRun>> runs(const HistoryQuery& query) const;
  // The measurements of the runs that runs(query) lists, oldest run first.
  [[nodiscard]] Result<std::vector<HistoryPoint>> points(const HistoryQuery& query) const;
  // The stored results document of run `id`.
  [[nodiscard]] Result<std::string> document(std::int64_t id) const;

  // The connection, for tests that arrange a failure (a trigger that raises).
  [[nodiscard]] sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };
  explicit HistoryDb(std::unique_ptr<sqlite3, Closer> db, std::string path);

  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;  // for error messages
};

}  // namespace pcieval
