// The one output path of a judged (or rendered) results document: every
// file a command was asked for (-o, --prom, --junit, --html), written
// atomically, each attempted even when another fails.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/bandwidth_budget.hpp"
#include "model/result.hpp"
#include "model/results.hpp"
#include "report/table.hpp"

namespace pcieval {

// What the renderers need besides the results (whose thresholds they read
// from the document itself).
struct ReportContext {
  // When the run started (seconds since the epoch) and how long it took: the
  // Prometheus run timestamp and duration and the JUnit suite's timestamp.
  // Absent for a document rendered as it stands (`pcieval report`): the
  // document holds neither, so neither is invented.
  std::optional<double> started_s;
  std::optional<double> duration_s;
  // The link budget each per-GPU measurement is shown beside, and the links
  // the table's EXPECTED column shows where that is not the lower of both
  // ends. Both are judgement (validate/), which report/ does not depend on,
  // so the caller computes them.
  std::vector<BandwidthBudget> budgets;
  std::vector<ShownLink> shown_links;
  // Each path link's state under load, from a live check's samples.
  std::vector<LoadedLink> loaded_links;
};

// The files asked for; an absent path is not written. "-" is stdout.
struct OutputPaths {
  std::optional<std::string> results_json;  // the results document (results_to_json)
  std::optional<std::string> prometheus;    // node_exporter textfile metrics
  std::optional<std::string> junit;         // JUnit XML, one test case per verdict
  std::optional<std::string> html;          // the self-contained HTML report
};

// One file to write: where, and how to render it (called only when `path`
// is given); `flag` ("--prom") starts the message of a failure, so that the
// operator knows which output it was.
struct OutputFile {
  std::optional<std::string> path;
  std::function<std::string()> render;
  std::string_view flag;
};

// Writes each given file atomically (report/atomic_file.hpp), in order. Every
// file is attempted even when an earlier one fails, so that a full disk for
// the JSON does not also cost the metrics. Returns the failures, in order
// ("--prom: cannot write /dev/full: No space left on device"); empty when
// everything asked for was written.
[[nodiscard]] std::vector<Error> write_files(std::span<const OutputFile> files);

// The results' outputs named by `paths`, rendered with `context`: the
// results document (-o), the Prometheus metrics (--prom), the JUnit XML
// (--junit) and the HTML report (--html), in that order, by write_files.
[[nodiscard]] std::vector<Error> write_outputs(const Results& results, const ReportContext& context,
                                               const OutputPaths& paths);

// One file a command reads or writes, by what names it on the command line.
struct NamedFile {
  std::string flag;  // "-o", "--history", "RESULTS", "--baseline"
  std::string path;  // "-": stdout for an output, stdin for an input
  // For an input: the one output flag that may name it too, rewriting it in
  // place ("-o" for validate's RESULTS, which is read whole first). Empty: none.
  std::string rewritten_by = {};
};

// Outputs that would destroy each other or an input, found before a command
// reads or measures anything: two outputs naming one file (the same path
// spelled two ways, a symbolic link to the other, or one existing file by
// device and inode: a hard link, a bind mount), two outputs on stdout ("-"),
// and an output naming an input other than as its rewrite. Devices
// (/dev/null, /dev/full) may be named by several: a write there replaces
// nothing. Empty paths are left to the writers.
[[nodiscard]] Status check_distinct_files(std::span<const NamedFile> outputs, std::span<const NamedFile> inputs);

// The folder `path` would be written in is there: "" when it is (or when
// `path` names none), else the problem ("directory D does not exist", "D is
// not a directory"). A symbolic link's folder is the one its target is in.
// What cannot be looked at (no permission) is left to the write, which names
// it.
[[nodiscard]] std::string missing_directory(const std::string& path);

// Whether an output's folder exists, checked before a command reads or
// measures anything: "<flag>: cannot write X: directory D does not exist".
// No path, "" and "-" (stdout) are fine.
[[nodiscard]] Status check_output_directory(std::string_view flag, const std::optional<std::string>& path);

}  // namespace pcieval
