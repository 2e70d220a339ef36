#include "fleet/fleet.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "model/link.hpp"
#include "model/text.hpp"

namespace pcieval {
namespace {

// The state the GPU's whole path should train to: the lowest of every hop's
// expected state (the narrowest hop wins). "unknown" when any hop's
// capability could not be read, so such GPUs never join a group of known ones.
std::string expected_path_link(const DeviceRecord& device) {
  if (device.path.empty()) return "unknown";
  std::optional<LinkState> lowest;
  for (const Link& link : device.path) {
    const Reading<LinkState> expected = link.expected();
    if (!expected) return "unknown";
    lowest = lowest ? lower_of(*lowest, *expected) : *expected;
  }
  return to_string(*lowest);
}

bool is_fleet_probe(const Measurement& m) {
  return (m.probe == "h2d_ce" || m.probe == "d2h_ce") && m.gpus.size() == 1 && m.aggregation == Aggregation::kAlone &&
         m.method == CopyMethod::kCopyEngine;
}

std::string names_of(const std::vector<const FleetNode*>& nodes, std::size_t at_most) {
  std::string text;
  for (std::size_t i = 0; i < nodes.size() && i < at_most; ++i) text += (i ? ", " : "") + nodes[i]->host;
  if (nodes.size() > at_most) text += ", +" + std::to_string(nodes.size() - at_most) + " more";
  return text;
}

std::string summarize_fleet(const Fleet& fleet) {
  std::vector<const FleetNode*> failed;
  std::vector<const FleetNode*> inconclusive;
  for (const FleetNode& node : fleet.nodes) {
    if (node.overall == Overall::kFail) failed.push_back(&node);
    if (node.overall == Overall::kInconclusive) inconclusive.push_back(&node);
  }
  const std::size_t passed = fleet.nodes.size() - failed.size() - inconclusive.size();
  std::string text = "pcieval fleet " + std::string(to_string(fleet.overall)) + ": " +
                     std::to_string(fleet.nodes.size()) + (fleet.nodes.size() == 1 ? " node, " : " nodes, ") +
                     std::to_string(passed) + " pass";
  if (!failed.empty()) text += ", " + std::to_string(failed.size()) + " fail (" + names_of(failed, 3) + ")";
  if (!inconclusive.empty()) {
    text += ", " + std::to_string(inconclusive.size()) + " inconclusive (" + names_of(inconclusive, 3) + ")";
  }
  std::vector<const FleetNode*> superseded;
  for (const FleetNode& node : fleet.nodes) {
    if (has_superseded_failure(node)) superseded.push_back(&node);
  }
  if (!superseded.empty()) {
    text += "; " + std::to_string(superseded.size()) + " host" + (superseded.size() == 1 ? "" : "s") +
            " with a failing document superseded by a newer one (" + names_of(superseded, 3) + ")";
  }
  if (!fleet.outliers.empty()) {
    const FleetOutlier& first = fleet.outliers.front();
    text += "; " + std::to_string(fleet.outliers.size()) + " outlier GPU" + (fleet.outliers.size() == 1 ? "" : "s") +
            " (" + first.host + " " + first.gpu + " " + first.probe + " " + fixed_text(first.median_gbps, 2) +
            " GB/s, group median " + fixed_text(first.group_median_gbps, 2) + ")";
  }
  return text;
}

}  // namespace

int exit_code_severity(int exit_code) {
  switch (exit_code) {
    case kExitPass:
      return 0;
    case kExitInconclusive:
      return 1;
    case kExitFail:
      return 3;
    default:
      return 2;  // usage, or anything unknown
  }
}

int worse_exit_code(int a, int b) { return exit_code_severity(b) > exit_code_severity(a) ? b : a; }

FleetNode node_from_results(const Results& results, std::string source) {
  FleetNode node;
  node.host = results.evidence.host.hostname;
  node.source = std::move(source);
  node.has_results = true;
  node.tool_version = results.tool.version;
  node.overall = results.overall;
  node.exit_code = exit_code_of(results.overall);
  node.reason = results.summary;
  node.simulated = results.evidence.host.simulated;
  for (const Verdict& verdict : results.verdicts) {
    if (verdict.status == VerdictStatus::kPass) continue;
    node.verdicts.push_back(
        FleetVerdict{verdict.subject, verdict.status, std::string(to_string(verdict.code)), verdict.reason});
  }
  for (const Measurement& m : results.evidence.measurements) {
    if (!is_fleet_probe(m)) continue;
    FleetGpuMeasurement gpu;
    gpu.gpu = to_string(m.gpus.front());
    gpu.probe = m.probe;
    gpu.direction = m.direction;
    gpu.median_gbps = m.stats.median_gbps;
    if (const DeviceRecord* device = find_device(results.evidence, m.gpus.front())) {
      gpu.device_id = hex_text(device->function.vendor_id, 4) + ":" + hex_text(device->function.device_id, 4);
      gpu.model = device->nvml && device->nvml->name ? *device->nvml->name : gpu.device_id;
      gpu.link = expected_path_link(*device);
    } else {
      // A measurement of a GPU the document does not list: its model is
      // unknown, so it joins no group.
      gpu.device_id = "unknown";
      gpu.model = "unknown";
      gpu.link = "unknown";
    }
    node.gpus.push_back(std::move(gpu));
  }
  return node;
}

FleetNode node_without_results(std::string host, std::string source, int exit_code, std::string reason) {
  FleetNode node;
  node.host = std::move(host);
  node.source = std::move(source);
  node.has_results = false;
  node.overall = Overall::kInconclusive;
  node.exit_code = exit_code;
  node.reason = std::move(reason);
  return node;
}

std::string short_reason(const FleetNode& node) {
  const std::string prefix = "pcieval " + std::string(to_string(node.overall)) + ": ";
  return node.reason.starts_with(prefix) ? node.reason.substr(prefix.size()) : node.reason;
}

std::string row_reason(const FleetNode& node) {
  std::string text = short_reason(node);
  for (const SupersededDocument& document : node.superseded) {
    if (document.overall == Overall::kFail) text += " (superseded " + document.source + " failed)";
  }
  return text;
}

bool has_superseded_failure(const FleetNode& node) {
  return std::any_of(node.superseded.begin(), node.superseded.end(),
                     [](const SupersededDocument& document) { return document.overall == Overall::kFail; });
}

std::vector<FleetNode> deduplicate_hosts(std::vector<FleetInput> inputs, std::vector<std::string>& problems) {
  std::map<std::string, FleetInput> kept;
  // Per host the documents replaced, with (written_s, order) to sort them by.
  std::map<std::string, std::vector<std::pair<std::tuple<double, std::size_t>, SupersededDocument>>> superseded;
  for (FleetInput& input : inputs) {
    // try_emplace moves `input` only when the host is new.
    const std::string host = input.node.host;
    auto [at, inserted] = kept.try_emplace(host, std::move(input));
    if (inserted) continue;
    FleetInput& other = at->second;
    // Results beat no results; then the later document; then the later argument.
    const auto rank = [](const FleetInput& i) { return std::make_tuple(i.node.has_results, i.written_s, i.order); };
    const bool replace = rank(input) > rank(other);
    const FleetInput& winner = replace ? input : other;
    const FleetInput& loser = replace ? other : input;
    std::string problem = "duplicate host " + host + ": " + loser.node.source + " and " + winner.node.source +
                          "; kept " + winner.node.source +
                          (winner.node.has_results != loser.node.has_results ? " (the readable one)"
                           : winner.written_s != loser.written_s             ? " (written later)"
                                                                             : " (given later)");
    // The failure would otherwise leave the fleet with this line alone: say
    // what it found and that it still counts.
    if (loser.node.overall == Overall::kFail) {
      problem += "; superseded " + loser.node.source + " failed (" + short_reason(loser.node) +
                 "), which keeps the fleet failing until it is left out of the merge";
    }
    problems.push_back(std::move(problem));
    FleetInput& dropped = replace ? other : input;
    superseded[host].emplace_back(
        std::make_tuple(dropped.written_s, dropped.order),
        SupersededDocument{dropped.node.source, dropped.node.has_results, dropped.node.overall, dropped.node.exit_code,
                           dropped.node.reason, std::move(dropped.node.verdicts)});
    if (replace) other = std::move(input);
  }
  std::vector<FleetNode> nodes;
  nodes.reserve(kept.size());
  for (auto& [host, input] : kept) {
    if (auto found = superseded.find(host); found != superseded.end()) {
      // Oldest first, whatever the order they were met in.
      std::stable_sort(found->second.begin(), found->second.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [when, document] : found->second) input.node.superseded.push_back(std::move(document));
    }
    nodes.push_back(std::move(input.node));
  }
  return nodes;
}

Fleet build_fleet(std::vector<FleetNode> nodes, std::vector<std::string> problems, std::string launch, ToolInfo tool,
                  const OutlierRule& rule) {
  Fleet fleet;
  fleet.tool = std::move(tool);
  fleet.launch = std::move(launch);
  fleet.rule = rule;
  std::stable_sort(nodes.begin(), nodes.end(), [](const FleetNode& a, const FleetNode& b) { return a.host < b.host; });
  // A simulated node's numbers are a model's: among real nodes they would
  // move the groups' medians and be judged as outliers or peers. Such
  // documents are left out, each named; a fleet of simulated nodes alone is
  // merged as it is (each node's line says "simulated node").
  const bool any_real = std::any_of(nodes.begin(), nodes.end(),
                                    [](const FleetNode& node) { return node.has_results && !node.simulated; });
  if (any_real) {
    std::vector<FleetNode> real;
    for (FleetNode& node : nodes) {
      if (node.simulated) {
        problems.push_back("simulated node " + node.host + " (" + node.source +
                           "): a document of check --simulate is not merged with real nodes");
      } else {
        real.push_back(std::move(node));
      }
    }
    nodes = std::move(real);
  }
  fleet.nodes = std::move(nodes);
  fleet.problems = std::move(problems);
  find_outliers(fleet.nodes, rule, fleet.groups, fleet.outliers);
  fleet.overall = Overall::kPass;
  fleet.exit_code = kExitPass;
  for (const FleetNode& node : fleet.nodes) {
    if (node.overall == Overall::kFail) {
      fleet.overall = Overall::kFail;
    } else if (node.overall == Overall::kInconclusive && fleet.overall == Overall::kPass) {
      fleet.overall = Overall::kInconclusive;
    }
    fleet.exit_code = worse_exit_code(fleet.exit_code, node.exit_code);
    // A burn-in gate must not pass a host whose failure was only covered by a
    // later document: exit 1, as for a failing node (Fleet::superseded's
    // comment says why).
    if (has_superseded_failure(node)) {
      fleet.overall = Overall::kFail;
      fleet.exit_code = worse_exit_code(fleet.exit_code, kExitFail);
    }
  }
  // A fleet of no node judged nothing: never a pass.
  if (fleet.nodes.empty()) {
    fleet.overall = Overall::kInconclusive;
    fleet.exit_code = worse_exit_code(fleet.exit_code, kExitInconclusive);
  }
  fleet.summary = summarize_fleet(fleet);
  return fleet;
}

}  // namespace pcieval
