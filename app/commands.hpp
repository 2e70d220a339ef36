// The subcommands of the pcieval command line. Each returns a process exit
// code from the table in DESIGN.md (model/exit_code.hpp); app/ is the only
// layer that turns outcomes into them.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/measure_rounds.hpp"
#include "bench/probe.hpp"
#include "model/exit_code.hpp"
#include "model/result.hpp"
#include "model/results.hpp"
#include "report/outputs.hpp"
#include "report/table.hpp"
#include "topology/discover.hpp"

namespace pcieval::app {

// Where the PCI tree and its topology come from. Parsed once from the flags.
struct SourceOptions {
  std::string sysfs_root = "/sys";
  std::optional<std::string> topology_xml;
};

// How evidence is judged and where the outcome goes: the flags check and
// validate share.
struct JudgeOptions {
  std::optional<std::string> output_path;  // -o FILE; "-" is stdout
  std::optional<std::string> prom_path;    // --prom FILE: node_exporter textfile
  std::optional<std::string> junit_path;   // --junit FILE
  std::optional<std::string> html_path;    // --html FILE: the self-contained HTML report
  std::optional<int> expected_gpus;
  std::optional<std::string> baseline_path;  // --baseline FILE: a known-good results document of this node
  std::optional<std::string> profile_path;   // --profile FILE: threshold profile (report/profile_json.hpp)
  bool quiet = false;                        // no table on stdout
  // check and diagnose: say in the notes what the path-settings and peer
  // rules read and did not judge (validate keeps the notes its document has).
  bool add_unjudged_notes = false;
  // --history [DB]: append the run to this SQLite history; "" is the default
  // path (default_history_path()).
  std::optional<std::string> history_path;
  // When the command started: the Prometheus run timestamp and duration.
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
  // -o, --prom, --junit and --html as report/outputs.hpp writes them.
  [[nodiscard]] OutputPaths outputs() const { return {output_path, prom_path, junit_path, html_path}; }
};

struct CheckOptions {
  SourceOptions sources;
  JudgeOptions judge;
  ProbeOptions probes;
  // --reference FILE: pcieval-copy-reference's JSON, recorded beside this
  // run's h2d_ce/d2h_ce (app/reference_copy.hpp).
  std::optional<std::string> reference_path;
  // --simulate SCENARIO (or PCIEVAL_SIMULATE): run on a simulated GPU node
  // (app/simulate.hpp, sim/README.md).
  std::optional<std::string> simulate;
  // --stop-grace: after the first stop signal (SIGINT, SIGTERM, SIGHUP,
  // SIGUSR1, SIGALRM), further ones within this long are the same request
  // (app/stop_signal.hpp).
  double stop_grace_s = 10;
};

struct ValidateOptions {
  std::string input_path;  // the results document to judge again; "-" is stdin
  JudgeOptions judge;
};

struct DiagnoseOptions {
  std::vector<std::string> input_paths;  // captured text, merged in order; "-" is stdin
  // --format NAME: read every input as this format (ingest/detect.hpp names)
  // instead of detecting it from the content.
  std::optional<std::string> format;
  // --link LINK: the link the bandwidth tools' numbers are judged against
  // ("gen4x16", "Gen5 x8", "16GT/s x16"; validate/stated_link_rules.hpp).
  std::optional<std::string> link;
  JudgeOptions judge;
};

struct TopoOptions {
  SourceOptions sources;
  bool json = false;
};

// The discovery stage's options for these flags.
[[nodiscard]] DiscoveryOptions discovery_options(const SourceOptions& sources);

[[nodiscard]] int run_check(const CheckOptions& options);
// The files JudgeOptions names, checked before a command reads or measures
// anything: the folder of each output (-o, --prom, --junit, --html, an
// explicit --history DB) exists ("-o: cannot write X: directory D does not
// exist"), and no two outputs, and no output and input (`inputs`, --baseline,
// --profile), are one file (report/outputs.hpp, check_distinct_files).
[[nodiscard]] Status check_outputs(const JudgeOptions& options, std::span<const NamedFile> inputs = {});
// `check --list-probes`: every probe's key, the modes that run it, and its
// description. Always 0.
[[nodiscard]] int run_list_probes();

// The measure stage (measure.cpp): reads the environment the probes need,
// then runs bench/'s measure_machine (measure_run.hpp) with stderr for its
// progress and the signal's name for evidence.interrupted: the probes the
// options select, a soak's rounds, link samples, counters and NVML readings
// added to `evidence`. `after_round`, when given, is called after each
// complete soak round (the per-round flush of -o); `stop`, when nonzero, ends
// the run between probes (ProbeOptions and the round rules:
// bench/measure_rounds.hpp).
void measure(Evidence& evidence, const ProbeOptions& options, const std::atomic<int>* stop = nullptr,
             const std::function<void(const Evidence&)>& after_round = {});
[[nodiscard]] int run_topo(const TopoOptions& options);
[[nodiscard]] int run_validate(const ValidateOptions& options);

// Which of pcieval's own JSON documents `text` is, so that a command given the
// wrong one can name the right command instead of a parse error.
enum class PcievalDocument { kNone, kResults, kFleet };
[[nodiscard]] PcievalDocument pcieval_document_kind(std::string_view text);
// One node's results document ("-": stdin), as read_results_file reads it; a
// fleet document is refused with what to give instead.
[[nodiscard]] Result<Results> read_node_results(const std::string& path);
// read_node_results, its error printed after `flag` ("--baseline: ") when it
// fails: nullopt then, and the command exits 2.
[[nodiscard]] std::optional<Results> read_node_results_or_print(const std::string& path, const std::string& flag = "");
[[nodiscard]] int run_diagnose(const DiagnoseOptions& options);

// The --profile FILE, checked; nullopt (and the error printed) when it cannot
// be used (judge_and_report.cpp).
[[nodiscard]] std::optional<ThresholdProfile> load_profile(const std::string& path);

// The tail of check, validate and diagnose (judge_and_report.cpp): judges results.evidence (replacing any
// verdicts, overall and summary it carries), prints the notes and the table
// unless quiet or the document goes to stdout, writes -o FILE atomically, and
// returns the exit code of the outcome (kExitUsage when the file was not
// written).
[[nodiscard]] int judge_and_report(Results results, const JudgeOptions& options);

// Judges results.evidence with this pcieval's rules and results.thresholds,
// replacing any verdicts, overall and summary it carries, and stamps this
// pcieval as the tool. With a baseline, medians more than the profile's
// baseline_max_drop_fraction below it are bandwidth_low too.
void judge(Results& results, const std::optional<int>& expected_gpus, const Evidence* baseline = nullptr);

struct CompareOptions {
  std::string before_path;
  std::string after_path;
  std::optional<std::string> profile_path;  // --profile FILE: judge both with it
};
// `pcieval compare BEFORE AFTER`: exit 0 when AFTER passes and nothing got
// worse, 1 when something got worse or AFTER fails, 3 when AFTER is
// inconclusive and nothing got worse, 2 on unreadable input.
[[nodiscard]] int run_compare(const CompareOptions& options);

// `pcieval retrain BDF`: shows the port above the device, its link (sysfs and
// config space) and the Retrain Link write it would make; with --apply (root
// only) makes it, waits for the link and judges the devices below the port
// before and after. Exit 0 when after passes and nothing got worse, 1 when it
// fails, 2 on a bad or refused target (or --apply without root), 3 when the
// link did not come back within the timeout or the write failed.
struct RetrainCommandOptions {
  std::string address;  // the device whose link is retrained, e.g. 0000:17:00.0
  std::string sysfs_root = "/sys";
  bool apply = false;
  double timeout_s = 1.0;  // Linux's PCIE_LINK_RETRAIN_TIMEOUT_MS
  ProbeOptions probes;     // quick probes, on the live machine only
  // --simulate SCENARIO: the whole retrain, probes before and after
  // included, on the simulated node (sim/README.md), whose links a fault
  // lowered and Retrain Link restores.
  std::optional<std::string> simulate;
};
[[nodiscard]] int run_retrain(const RetrainCommandOptions& options);

// Run history (history_command.cpp).
struct HistoryOptions {
  std::string db_path;                 // "": default_history_path(), else timer_history_path()
  std::optional<std::string> subject;  // --gpu BDF
  std::optional<int> limit;            // --limit N: the newest N runs
  bool json = false;
};
// `pcieval history`: the runs and per-GPU trends; 0, or 2 when the database
// cannot be read.
[[nodiscard]] int run_history(const HistoryOptions& options);
// $XDG_DATA_HOME/pcieval/history.sqlite, else ~/.local/share/pcieval/history.sqlite;
// empty when neither variable is set.
[[nodiscard]] std::string default_history_path();
// The history the nightly timer writes (contrib/systemd/pcieval-check.sh):
// $STATE_DIRECTORY/history.sqlite when systemd set it, else
// /var/lib/pcieval/history.sqlite. `history` reads it when the user gave no
// --db and has no history of their own.
[[nodiscard]] std::string timer_history_path();
// Appends a judged run to the history at `path` ("" for the default). An
// error ("--history: ...") leaves the database as it was.
[[nodiscard]] Status append_history(const std::string& path, const Results& results, double started_s);

// `pcieval report RESULTS.json`: renders the document as it stands (nothing
// re-judged) to the files asked for, the table on stdout when none is or with
// --table. 0 when everything asked for was written, 2 otherwise.
struct ReportOptions {
  std::string input_path;  // "-" is stdin
  std::optional<std::string> html_path;
  std::optional<std::string> prom_path;
  std::optional<std::string> junit_path;
  bool table = false;
};
[[nodiscard]] int run_report(const ReportOptions& options);
// The budget each one-GPU measurement is shown beside: validate/'s budget, in
// the measurement's direction, of the state the GPU's whole path should
// train to. Group and host measurements have none.
[[nodiscard]] std::vector<BandwidthBudget> path_budgets(const Evidence& evidence, const ThresholdProfile& profile);
// What validate/ holds each device's shown link to where that is not the lower
// of both ends (an emulated port above it, no port above it in the evidence),
// for the table's EXPECTED column.
[[nodiscard]] std::vector<ShownLink> shown_links(const Evidence& evidence, const ThresholdProfile& profile);
// Each link of a GPU's path as read under load by a live check (the state
// the verdicts hold it to, validate/link_rules.hpp state_under_load), for
// the table's NEGOTIATED column and the HTML report.
[[nodiscard]] std::vector<LoadedLink> loaded_links(const Evidence& evidence);
// The renderers' context of `results`: its path budgets and shown links
// (computed here, in app/, from validate/), no run times.
[[nodiscard]] ReportContext report_context(const Results& results);
// Prints each output that was not written ("pcieval: error: ..."); true when
// there is none.
[[nodiscard]] bool all_written(const std::vector<Error>& failures);
// The exit code of an outcome `code` when an output was not written: 2
// ("could not judge"), except that a proven fault stays 1 (1 > 2 > 3), so a
// full disk never keeps a Slurm health check from draining a broken node.
[[nodiscard]] int with_output_failure(int code);

// "pcieval: error: <message>" on stderr, one line.
void print_error(const std::string& message);

// `pcieval fleet merge FILE...` (fleet_command.cpp).
struct FleetMergeOptions {
  std::vector<std::string> input_paths;    // results documents, one per node
  std::optional<std::string> output_path;  // -o FILE: the fleet document; "-" is stdout
  std::optional<std::string> html_path;    // --html FILE: the fleet page
  bool quiet = false;                      // no table on stdout
  unsigned jobs = 0;                       // --jobs N: threads reading the files; 0: one per usable CPU
};
// Reads every file (a bad one is a problem line and an inconclusive node with
// exit code 2; the merge goes on), keeps one node per host, builds the fleet,
// prints the table unless quiet, writes -o FILE. Returns the fleet's exit
// code (fail 1 > usage 2 > inconclusive 3 > pass 0), 2 when -o was not written.
[[nodiscard]] int run_fleet_merge(const FleetMergeOptions& options);

// The fleet flags of check (mpi_fleet.cpp runs them; without MPI in the
// build they are refused).
struct FleetCheckOptions {
  std::optional<std::string> output_path;  // --fleet-output FILE, written by rank 0
  std::optional<std::string> html_path;    // --fleet-html FILE: the fleet page, written by rank 0
  double timeout_s = 300;                  // --fleet-timeout: rank 0's wait for the other nodes
  bool one_node_per_rank = false;          // --fleet-one-node-per-rank: tests and labs
  bool allreduce = true;                   // off with --no-fleet-allreduce
  [[nodiscard]] bool any_given() const {
    return output_path.has_value() || html_path.has_value() || one_node_per_rank || !allreduce;
  }
};

}  // namespace pcieval::app

namespace pcieval {
struct Fleet;
}

namespace pcieval::app {

// The tail of fleet merge and of an MPI fleet run: the table on stdout unless
// quiet or the document goes to stdout, the fleet document to `output_path`,
// the fleet page to `html_path` (both atomically; each is attempted when the
// other fails). Returns fleet.exit_code, or kExitUsage when one was not written.
[[nodiscard]] int tell_fleet(const Fleet& fleet, const std::optional<std::string>& output_path,
                             const std::optional<std::string>& html_path, bool quiet);

}  // namespace pcieval::app
