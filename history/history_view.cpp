#include "history/history_view.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "model/text.hpp"
#include "report/table.hpp"

namespace pcieval {

std::optional<double> Trend::change_percent() const {
  if (points.size() < 2 || points.front().median_gbps == 0) return std::nullopt;
  return (points.back().median_gbps - points.front().median_gbps) / points.front().median_gbps * 100.0;
}

std::vector<Trend> trends_of(const std::vector<HistoryPoint>& points) {
  using Key = std::tuple<std::string, std::string, std::string, std::uint64_t>;
  std::map<Key, Trend> by_key;
  for (const HistoryPoint& point : points) {
    const HistoryMeasurement& m = point.measurement;
    Trend& trend = by_key[Key{m.subject, m.probe, m.direction, m.size_bytes}];
    if (trend.points.empty()) {
      trend.subject = m.subject;
      trend.probe = m.probe;
      trend.direction = m.direction;
      trend.size_bytes = m.size_bytes;
    }
    trend.points.push_back(TrendPoint{point.run_id, point.started_s, m.median_gbps});
  }
  std::vector<Trend> trends;
  trends.reserve(by_key.size());
  for (auto& [key, trend] : by_key) {
    // Points arrive in run order; sort anyway so callers may pass any order.
    std::stable_sort(trend.points.begin(), trend.points.end(), [](const TrendPoint& a, const TrendPoint& b) {
      return std::tie(a.started_s, a.run_id) < std::tie(b.started_s, b.run_id);
    });
    trends.push_back(std::move(trend));
  }
  return trends;
}

namespace {

std::string change_text(const Trend& trend) {
  const auto change = trend.change_percent();
  if (!change) return "-";
  return (*change >= 0 ? "+" : "") + fixed_text(*change, 1) + "%";
}

std::string medians_text(const Trend& trend) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(trend.points.size(), kShownMedians);
  if (shown < trend.points.size()) out = "... ";
  for (std::size_t i = trend.points.size() - shown; i < trend.points.size(); ++i) {
    out += fixed_text(trend.points[i].median_gbps, 2) + (i + 1 < trend.points.size() ? " " : "");
  }
  return out;
}

// Left-aligned columns, numbers right-aligned, two spaces apart. Host names,
// summaries and subjects come from documents: each cell is terminal_text.
std::string aligned(std::vector<std::vector<std::string>> rows, const std::vector<bool>& right) {
  for (auto& row : rows) std::transform(row.begin(), row.end(), row.begin(), terminal_text);
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t pad = widths[i] - row[i].size();
      const bool last = i + 1 == row.size();
      if (i < right.size() && right[i]) {
        line += std::string(pad, ' ') + row[i];
      } else {
        line += row[i] + (last ? "" : std::string(pad, ' '));
      }
      if (!last) line += "  ";
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string render_history_table(const std::vector<HistoryRun>& runs, const std::vector<Trend>& trends) {
  if (runs.empty()) return "no runs recorded\n";
  std::vector<std::vector<std::string>> run_rows = {{"RUN", "STARTED (UTC)", "HOST", "OVERALL", "SUMMARY"}};
  for (const HistoryRun& run : runs) {
    run_rows.push_back({std::to_string(run.id), utc_timestamp(run.started_s), run.host, run.overall, run.summary});
  }
  std::string out = aligned(run_rows, {true});
  if (trends.empty()) return out + "\nno measurements recorded (runs with --no-probes, or no probe ran)\n";
  std::vector<std::vector<std::string>> trend_rows = {
      {"SUBJECT", "PROBE", "DIR", "SIZE", "RUNS", "FIRST GB/s", "LAST GB/s", "CHANGE", "MEDIANS GB/s (oldest first)"}};
  for (const Trend& trend : trends) {
    trend_rows.push_back({trend.subject, trend.probe, trend.direction,
                          binary_size_text(static_cast<double>(trend.size_bytes)), std::to_string(trend.points.size()),
                          fixed_text(trend.points.front().median_gbps, 2),
                          fixed_text(trend.points.back().median_gbps, 2), change_text(trend), medians_text(trend)});
  }
  return out + "\n" + aligned(trend_rows, {false, false, false, true, true, true, true, true});
}

std::string render_history_json(const std::vector<HistoryRun>& runs, const std::vector<Trend>& trends) {
  nlohmann::json document = {{"runs", nlohmann::json::array()}, {"trends", nlohmann::json::array()}};
  for (const HistoryRun& run : runs) {
    document["runs"].push_back({{"id", run.id},
                                {"started_utc", utc_timestamp(run.started_s)},
                                {"started_s", run.started_s},
                                {"host", run.host},
                                {"overall", run.overall},
                                {"summary", run.summary}});
  }
  for (const Trend& trend : trends) {
    nlohmann::json points = nlohmann::json::array();
    for (const TrendPoint& point : trend.points) {
      points.push_back({{"run_id", point.run_id},
                        {"started_utc", utc_timestamp(point.started_s)},
                        {"median_gbps", point.median_gbps}});
    }
    const auto change = trend.change_percent();
    document["trends"].push_back({{"subject", trend.subject},
                                  {"probe", trend.probe},
                                  {"direction", trend.direction},
                                  {"size_bytes", trend.size_bytes},
                                  {"first_gbps", trend.points.front().median_gbps},
                                  {"last_gbps", trend.points.back().median_gbps},
                                  {"change_percent", change ? nlohmann::json(*change) : nlohmann::json(nullptr)},
                                  {"points", points}});
  }
  // Text that is not UTF-8 (a hostname) becomes U+FFFD instead of an exception.
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace pcieval
