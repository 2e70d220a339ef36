// The subcommands of the pcieval command line. Each returns a process exit
// code from the table in DESIGN.md; app/ is the only layer that knows them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "bench/probe.hpp"
#include "model/results.hpp"
#include "topology/discover.hpp"

namespace pcieval::app {

enum ExitCode : int {
  kExitPass = 0,          // every verdict pass (or nothing to judge)
  kExitFail = 1,          // at least one failing verdict
  kExitUsage = 2,         // bad flag, unreadable or malformed input, output not written
  kExitInconclusive = 3,  // evidence not good enough to judge, and nothing failed
};

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
  std::optional<int> expected_gpus;
  std::optional<std::string> baseline_path;  // --baseline FILE: a known-good results document of this node
  bool quiet = false;                        // no table on stdout
  // When the command started: the Prometheus run timestamp and duration.
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
};

// Which probes check runs (--quick, --full, --no-probes).
struct ProbeOptions {
  bool enabled = true;
  RunConfig config;  // mode quick unless --full
};

struct CheckOptions {
  SourceOptions sources;
  JudgeOptions judge;
  ProbeOptions probes;
};

struct ValidateOptions {
  std::string input_path;  // the results document to judge again; "-" is stdin
  JudgeOptions judge;
};

struct DiagnoseOptions {
  std::vector<std::string> input_paths;  // captured text, merged in order; "-" is stdin
  JudgeOptions judge;
};

struct TopoOptions {
  SourceOptions sources;
  bool json = false;
};

// The discovery stage's options for these flags.
[[nodiscard]] DiscoveryOptions discovery_options(const SourceOptions& sources);

[[nodiscard]] int run_check(const CheckOptions& options);
// `check --list-probes`: every probe's key, the modes that run it, and its
// description. Always 0.
[[nodiscard]] int run_list_probes();

// The measure stage (measure.cpp): runs the probes the options select on this
// machine, sampling the links of every GPU path meanwhile, and adds the probe
// runs, measurements, link samples, counters and NVML readings to `evidence`.
// What could not be used (NVML, hwloc) becomes a note; nothing here fails.
void measure(Evidence& evidence, const ProbeOptions& options);
[[nodiscard]] int run_topo(const TopoOptions& options);
[[nodiscard]] int run_validate(const ValidateOptions& options);
[[nodiscard]] int run_diagnose(const DiagnoseOptions& options);

// The tail of check, validate and diagnose: judges results.evidence (replacing any
// verdicts, overall and summary it carries), prints the notes and the table
// unless quiet or the document goes to stdout, writes -o FILE atomically, and
// returns the exit code of the outcome (kExitUsage when the file was not
// written).
[[nodiscard]] int judge_and_report(Results results, const JudgeOptions& options);

// Judges results.evidence with this pcieval's rules, replacing any verdicts,
// overall and summary it carries, and stamps this pcieval as the tool.
// With a baseline, medians more than 10% below it are bandwidth_low too.
void judge(Results& results, const std::optional<int>& expected_gpus, const Evidence* baseline = nullptr);

[[nodiscard]] int exit_code_of(Overall overall);

struct CompareOptions {
  std::string before_path;
  std::string after_path;
};
// `pcieval compare BEFORE AFTER`: exit 0 when AFTER passes and nothing got
// worse, 1 when something got worse or AFTER fails, 3 when AFTER is
// inconclusive and nothing got worse, 2 on unreadable input.
[[nodiscard]] int run_compare(const CompareOptions& options);

// "pcieval: error: <message>" on stderr, one line.
void print_error(const std::string& message);

}  // namespace pcieval::app
