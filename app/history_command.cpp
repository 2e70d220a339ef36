// `pcieval history` and `--history [DB]`: the run history in SQLite.
#include <cstdlib>
#include <iostream>

#include "app/commands.hpp"
#include "history/history_db.hpp"
#include "history/history_view.hpp"
#include "model/pci_address.hpp"

namespace pcieval::app {

std::string default_history_path() {
  // The XDG base directory spec: $XDG_DATA_HOME when set and absolute.
  const char* data_home = std::getenv("XDG_DATA_HOME");
  if (data_home != nullptr && data_home[0] == '/') return std::string(data_home) + "/pcieval/history.sqlite";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.local/share/pcieval/history.sqlite";
  return {};
}

namespace {

Result<std::string> resolve(const std::string& path) {
  if (!path.empty()) return path;
  std::string fallback = default_history_path();
  if (fallback.empty()) return make_error("no history path: neither XDG_DATA_HOME nor HOME is set; give one");
  return fallback;
}

}  // namespace

bool append_history(const std::string& path, const Results& results, double started_s) {
  auto resolved = resolve(path);
  if (!resolved) {
    print_error("--history: " + resolved.error().message);
    return false;
  }
  auto db = HistoryDb::open(*resolved, HistoryDb::Mode::kAppend);
  if (!db) {
    print_error("--history: " + db.error().message);
    return false;
  }
  if (auto appended = db.value().append(history_record_of(results, started_s)); !appended) {
    print_error("--history: " + appended.error().message);
    return false;
  }
  return true;
}

int run_history(const HistoryOptions& options) {
  auto resolved = resolve(options.db_path);
  if (!resolved) {
    print_error(resolved.error().message);
    return kExitUsage;
  }
  HistoryQuery query;
  query.limit = options.limit;
  if (options.subject) {
    // Stored subjects are canonical addresses ("0000:17:00.0") or host
    // subjects ("numa0"); accept any spelling the address parser does.
    if (auto address = parse_pci_address(*options.subject)) {
      query.subject = to_string(address.value());
    } else if (options.subject->rfind("numa", 0) == 0) {
      query.subject = *options.subject;
    } else {
      print_error("--gpu: " + address.error().message);
      return kExitUsage;
    }
  }
  auto db = HistoryDb::open(*resolved, HistoryDb::Mode::kReadOnly);
  if (!db) {
    print_error(db.error().message);
    return kExitUsage;
  }
  auto runs = db.value().runs(query);
  if (!runs) {
    print_error(runs.error().message);
    return kExitUsage;
  }
  auto points = db.value().points(query);
  if (!points) {
    print_error(points.error().message);
    return kExitUsage;
  }
  const std::vector<Trend> trends = trends_of(*points);
  std::cout << (options.json ? render_history_json(*runs, trends) : render_history_table(*runs, trends));
  return kExitPass;
}

}  // namespace pcieval::app
