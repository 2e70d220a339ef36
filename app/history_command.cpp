// `pcieval history` and `--history [DB]`: the run history in SQLite.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

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

std::string timer_history_path() {
  // As contrib/systemd/pcieval-check.sh chooses it: the unit's state folder
  // (systemd sets STATE_DIRECTORY from StateDirectory=; a list when the unit
  // names several, the first is pcieval's), else /var/lib/pcieval.
  const char* state = std::getenv("STATE_DIRECTORY");
  std::string folder = state != nullptr && state[0] == '/' ? std::string(state) : std::string("/var/lib/pcieval");
  if (const auto colon = folder.find(':'); colon != std::string::npos) folder.resize(colon);
  return folder + "/history.sqlite";
}

namespace {

// Where --history writes: the path given, else the per-user default.
Result<std::string> resolve(const std::string& path) {
  if (!path.empty()) return path;
  std::string fallback = default_history_path();
  if (fallback.empty()) return make_error("no history path: neither XDG_DATA_HOME nor HOME is set; give one");
  return fallback;
}

// Where `history` reads without --db: the user's own history (where a bare
// --history writes), then the nightly timer's, the first that exists. An
// operator on a node whose only history is the timer's should not need to
// know the unit's state folder to read it.
Result<std::string> find_history(const std::string& path) {
  if (!path.empty()) return path;
  std::error_code ignored;
  const std::string own = default_history_path();
  if (!own.empty() && std::filesystem::exists(own, ignored)) return own;
  const std::string timer = timer_history_path();
  if (std::filesystem::exists(timer, ignored)) return timer;
  return make_error("no history database: looked at " +
                    (own.empty() ? std::string("the per-user one (neither XDG_DATA_HOME nor HOME is set)") : own) +
                    " (where check --history writes) and " + timer +
                    " (the nightly pcieval-check.timer's); give one with --db DB");
}

// For a subject no run measured: "12 runs recorded, none measured
// 0000:17:00.0; GPUs that were measured: 0000:18:00.0, 0000:19:00.0". Empty
// when the database holds no run at all.
Result<std::string> what_was_measured(const HistoryDb& db, const std::string& subject) {
  auto runs = db.runs(HistoryQuery{});
  if (!runs) return runs.error();
  if (runs->empty()) return std::string();
  auto points = db.points(HistoryQuery{});
  if (!points) return points.error();
  std::set<std::string> gpus;
  std::set<std::string> host_subjects;
  for (const HistoryPoint& point : *points) {
    const std::string& measured = point.measurement.subject;
    (parse_pci_address(measured) ? gpus : host_subjects).insert(measured);
  }
  const auto joined = [](const std::set<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  };
  const std::size_t count = runs->size();
  std::string text = std::to_string(count) + (count == 1 ? " run" : " runs") + " recorded, none measured " + subject;
  if (!gpus.empty()) {
    text += "; GPUs that were measured: " + joined(gpus);
  } else {
    text += "; no run measured a GPU (runs with --no-probes, of a --sysfs-root tree, or on a node without GPUs)";
  }
  if (!host_subjects.empty()) text += "; host subjects: " + joined(host_subjects);
  return text;
}

}  // namespace

Status append_history(const std::string& path, const Results& results, double started_s) {
  auto resolved = resolve(path);
  if (!resolved) return make_error("--history: " + resolved.error().message);
  auto db = HistoryDb::open(*resolved, HistoryDb::Mode::kAppend);
  if (!db) return make_error("--history: " + db.error().message);
  if (auto appended = db.value().append(history_record_of(results, started_s)); !appended) {
    return make_error("--history: " + appended.error().message);
  }
  return ok_status();
}

int run_history(const HistoryOptions& options) {
  auto resolved = find_history(options.db_path);
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
  // "no runs recorded" would be wrong when there are runs, only none of
  // this subject: say what the database holds instead.
  if (query.subject && runs->empty()) {
    auto other = what_was_measured(db.value(), *query.subject);
    if (!other) {
      print_error(other.error().message);
      return kExitUsage;
    }
    if (!other->empty()) {
      // The JSON on stdout stays what a script parses; the words go to stderr.
      if (options.json) {
        std::cout << render_history_json(*runs, trends);
        std::cerr << "pcieval: " << terminal_text(*other) << "\n";
      } else {
        std::cout << terminal_text(*other) << "\n";
      }
      return kExitPass;
    }
  }
  std::cout << (options.json ? render_history_json(*runs, trends) : render_history_table(*runs, trends));
  return kExitPass;
}

}  // namespace pcieval::app
