// What `pcieval history` shows: the runs, and per subject, probe and
// direction the median bandwidth over time with its change from the first run
// to the last, so a link that loses a little every week stands out. Pure
// functions of what history_db.hpp reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.hpp"

namespace pcieval {

struct TrendPoint {
  std::int64_t run_id = 0;
  double started_s = 0;
  double median_gbps = 0;
};

// One subject's measurements of one probe, direction and copy size, oldest
// run first.
struct Trend {
  std::string subject;
  std::string probe;
  std::string direction;
  std::uint64_t size_bytes = 0;
  std::vector<TrendPoint> points;
  // (last - first) / first, in percent; nullopt with one point or a first
  // median of zero.
  [[nodiscard]] std::optional<double> change_percent() const;
};

// Groups points (in run order, as HistoryDb::points returns them) into
// trends, ordered by subject, probe, direction and size.
[[nodiscard]] std::vector<Trend> trends_of(const std::vector<HistoryPoint>& points);

// The human listing: a runs table (newest first), then a trends table whose
// last column holds the medians oldest first (the last `kShownMedians`).
inline constexpr int kShownMedians = 8;
[[nodiscard]] std::string render_history_table(const std::vector<HistoryRun>& runs, const std::vector<Trend>& trends);

// {"runs": [...], "trends": [...]} with numbers as numbers and unit-suffixed
// keys, for scripts.
[[nodiscard]] std::string render_history_json(const std::vector<HistoryRun>& runs, const std::vector<Trend>& trends);

}  // namespace pcieval
