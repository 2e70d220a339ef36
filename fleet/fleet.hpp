// The fleet document in memory: one entry per node (its overall verdict, the
// one-line reason and the copy-engine medians of its GPUs) and the GPUs that
// sit far below their peers across the fleet. Built the same way from results
// files (`pcieval fleet merge`) and from documents gathered over MPI.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/fleet_allreduce.hpp"
#include "model/exit_code.hpp"
#include "model/measurement.hpp"
#include "model/median.hpp"
#include "model/results.hpp"
#include "model/verdict.hpp"

namespace pcieval {

// Bump rules as for kResultsSchemaVersion: MAJOR when a field is removed,
// renamed or changes meaning; MINOR when a field is added. Keep
// results_schema/pcieval-fleet.schema.json in step.
inline constexpr const char* kFleetSchemaVersion = "1.2.0";

// How bad an exit code is for the fleet: fail (1) > usage (2) > inconclusive
// (3) > pass (0). A failing node is a known fault and outranks everything; an
// input that could not be read outranks a node that could not judge, because
// nothing at all is known of it. Unknown codes rank as usage.
[[nodiscard]] int exit_code_severity(int exit_code);
[[nodiscard]] int worse_exit_code(int a, int b);

// One GPU's median from one of the per-GPU copy-engine probes (h2d_ce or
// d2h_ce, aggregation "alone"): what the outlier rule compares across nodes.
struct FleetGpuMeasurement {
  std::string gpu;        // its address on its node, "0000:17:00.0"
  std::string device_id;  // "10de:2330": the model key
  std::string model;      // NVML's name when the node read it, else device_id
  std::string link;       // the state its whole path should train to, "Gen5 x16"; "unknown" when unreadable
  std::string probe;      // "h2d_ce"
  Direction direction = Direction::kHostToDevice;
  double median_gbps = 0;
};

// A verdict that is not a pass, kept so the fleet document says why a node
// failed without the node's whole document.
struct FleetVerdict {
  std::string subject;
  VerdictStatus status = VerdictStatus::kInconclusive;
  std::string code;  // ReasonCode's name
  std::string reason;
};

// A document of a host that a merge replaced by a newer one of the same host
// (deduplicate_hosts): kept so that the fleet document still says what it
// found (1.2.0).
struct SupersededDocument {
  std::string source;  // its file path
  bool has_results = false;
  Overall overall = Overall::kInconclusive;
  int exit_code = kExitInconclusive;
  std::string reason;
  std::vector<FleetVerdict> verdicts;  // those that are not a pass
};

struct FleetNode {
  std::string host;          // the node's name; unique in a fleet
  std::string source;        // where its document came from: a file path, or "rank 3"
  std::optional<int> rank;   // the MPI rank that ran it; nullopt for merged files
  bool has_results = false;  // false: no readable results document (reason says why)
  std::string tool_version;  // the pcieval that judged it; empty without results
  Overall overall = Overall::kInconclusive;
  int exit_code = kExitInconclusive;
  std::string reason;  // one line: the document's summary, or why there is none
  std::vector<FleetVerdict> verdicts;
  std::vector<FleetGpuMeasurement> gpus;
  // The document came from `check --simulate` (host.simulated): its numbers
  // are a model's and never meet real nodes' (build_fleet).
  bool simulated = false;
  // Older documents of this host that this one replaced in a merge, oldest
  // first. A failing one makes the fleet fail (build_fleet): a pass
  // written after a failure does not prove the fault gone (a link that
  // retrains under load passes the next run as often as not), and a second
  // node with the same host name is not the first node's rerun at all.
  std::vector<SupersededDocument> superseded;
};

// Whether a document `node` replaced had a failing verdict.
[[nodiscard]] bool has_superseded_failure(const FleetNode& node);

// The outlier rule. For every group of GPUs with the same device id, the same
// expected path link state, probe and direction across the fleet: with m the
// median of the group's medians and MAD the median absolute deviation from m,
// a GPU is an outlier when its median is below m - k * 1.4826 * MAD (1.4826
// scales the MAD to a standard deviation for normal data, so k = 3.5 is the
// usual "modified z-score above 3.5" cut of Iglewicz and Hoaglin) AND below
// max_fraction_of_median * m. The second test keeps a tight group (a MAD of
// a few hundredths of a GB/s) from flagging noise; the first keeps a wide
// one from flagging its own spread. Groups smaller than min_group_size are
// not judged (the median and MAD of 4 values say too little): they are
// listed with judged = false.
struct OutlierRule {
  double k = 3.5;
  double max_fraction_of_median = 0.9;
  std::size_t min_group_size = 5;
};
inline constexpr double kMadToSigma = 1.4826;

struct FleetGroup {
  std::string device_id;
  std::string model;
  std::string link;
  std::string probe;
  Direction direction = Direction::kHostToDevice;
  std::size_t gpus = 0;
  double median_gbps = 0;
  double mad_gbps = 0;
  bool judged = false;
  double threshold_gbps = 0;  // the lower of both cuts; meaningful when judged
};

struct FleetOutlier {
  std::string host;
  std::string gpu;
  std::string device_id;
  std::string model;
  std::string link;
  std::string probe;
  Direction direction = Direction::kHostToDevice;
  double median_gbps = 0;
  double group_median_gbps = 0;
  double mad_gbps = 0;
  double threshold_gbps = 0;
  std::size_t group_gpus = 0;
};

struct Fleet {
  ToolInfo tool;
  std::string launch;  // "merge" or "mpi"
  OutlierRule rule;
  std::vector<FleetNode> nodes;  // ordered by host
  std::vector<FleetGroup> groups;
  std::vector<FleetOutlier> outliers;
  // Inputs that could not be read and duplicate hosts, one line each.
  std::vector<std::string> problems;
  // The all-reduce over every GPU of every node: MPI runs only (1.1.0).
  std::optional<FleetAllReduce> allreduce;
  Overall overall = Overall::kPass;
  int exit_code = kExitPass;
  std::string summary;  // one line
};

// The node entry of one results document: its host, overall, summary, the
// verdicts that are not a pass, and the median of every per-GPU h2d_ce and
// d2h_ce measurement taken alone, with the GPU's model and expected link.
[[nodiscard]] FleetNode node_from_results(const Results& results, std::string source);

// A node without a usable results document: inconclusive, exit code
// `exit_code` (kExitUsage for an unreadable file or a check that errored,
// kExitInconclusive for a rank that timed out), `reason` saying why.
[[nodiscard]] FleetNode node_without_results(std::string host, std::string source, int exit_code, std::string reason);

// The node's summary without its "pcieval <overall>: " prefix, as the fleet
// table and page list it (the overall has a column of its own).
[[nodiscard]] std::string short_reason(const FleetNode& node);

// short_reason, then each failing document the node replaced ("(superseded
// old.json failed)"): the table and page row of a host that passes now but
// fails the fleet must say why.
[[nodiscard]] std::string row_reason(const FleetNode& node);

// One input of a merge: a node and when its document was written (the file's
// modification time, seconds since the epoch), which decides between two
// documents of the same host.
struct FleetInput {
  FleetNode node;
  double written_s = 0;
  std::size_t order = 0;  // position on the command line
};

// Keeps one node per host: of two inputs with the same host the one written
// later wins (the later on the command line on a tie), and a problem line
// names both sources, the one kept and, when it failed, the outcome of the
// one dropped. Nodes without results never replace a node with results of
// the same host. The node kept lists the documents it replaced (superseded).
// Returns the kept nodes, ordered by host.
[[nodiscard]] std::vector<FleetNode> deduplicate_hosts(std::vector<FleetInput> inputs,
                                                       std::vector<std::string>& problems);

// The groups and outliers of `nodes` under `rule` (fleet/outliers.cpp).
void find_outliers(const std::vector<FleetNode>& nodes, const OutlierRule& rule, std::vector<FleetGroup>& groups,
                   std::vector<FleetOutlier>& outliers);

// The whole fleet: nodes as given (ordered by host), groups, outliers, the
// worst exit code and overall (a superseded failing document counts as a
// failing node), and the summary line.
[[nodiscard]] Fleet build_fleet(std::vector<FleetNode> nodes, std::vector<std::string> problems, std::string launch,
                                ToolInfo tool, const OutlierRule& rule = {});

}  // namespace pcieval
