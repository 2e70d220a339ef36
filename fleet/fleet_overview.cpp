#include "fleet/fleet_overview.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace pcieval {
namespace {

// The kind of a node: each (model, link) of its GPUs with how many GPUs,
// counted once per GPU address (a GPU has an h2d_ce and a d2h_ce median).
using Kind = std::vector<std::tuple<std::string, std::string, std::size_t>>;

Kind kind_of(const FleetNode& node) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> gpus;
  for (const FleetGpuMeasurement& m : node.gpus) gpus[{m.model, m.link}].insert(m.gpu);
  Kind kind;
  for (const auto& [key, addresses] : gpus) kind.emplace_back(key.first, key.second, addresses.size());
  return kind;
}

PassingKind describe(const Kind& kind) {
  PassingKind passing;
  if (kind.empty()) passing.gpus = "no GPU measured";
  std::vector<std::string> links;
  for (const auto& [model, link, count] : kind) {
    passing.gpus += (passing.gpus.empty() ? "" : ", ") + std::to_string(count) + " x " + model;
    if (std::find(links.begin(), links.end(), link) == links.end()) links.push_back(link);
  }
  for (const std::string& link : links) passing.link += (passing.link.empty() ? "" : ", ") + link;
  if (passing.link.empty()) passing.link = "-";
  return passing;
}

}  // namespace

std::string grouped_count(std::size_t count) {
  std::string digits = std::to_string(count);
  for (auto at = static_cast<std::ptrdiff_t>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(digits.begin() + at, ',');
  return digits;
}

FleetOverview overview_of(const Fleet& fleet, std::size_t list_every_node_up_to) {
  FleetOverview overview;
  if (fleet.nodes.size() <= list_every_node_up_to) {
    for (const FleetNode& node : fleet.nodes) overview.listed.push_back(&node);
    return overview;
  }
  overview.every_node = false;
  std::set<std::string> with_outlier;
  for (const FleetOutlier& o : fleet.outliers) with_outlier.insert(o.host);
  // Fail first, then a passing node whose GPU is far below its peers (the
  // next to drain), then what could not be read or judged.
  const auto rank = [&](const FleetNode& node) {
    // A host whose failing document a newer one replaced fails the fleet.
    if (node.exit_code == kExitFail || has_superseded_failure(node)) return 0;
    if (node.exit_code == kExitPass && with_outlier.contains(node.host)) return 1;
    if (node.exit_code == kExitPass) return 4;
    return node.exit_code == kExitInconclusive ? 3 : 2;
  };
  std::array<std::vector<const FleetNode*>, 4> needs_look;
  std::map<Kind, std::size_t> kinds;  // index into overview.passing
  for (const FleetNode& node : fleet.nodes) {
    const int r = rank(node);
    if (r < 4) {
      needs_look[static_cast<std::size_t>(r)].push_back(&node);
      continue;
    }
    const Kind kind = kind_of(node);
    const auto [at, inserted] = kinds.try_emplace(kind, overview.passing.size());
    if (inserted) {
      overview.passing.push_back(describe(kind));
      overview.passing.back().first_host = node.host;
    }
    PassingKind& passing = overview.passing[at->second];
    ++passing.nodes;
    passing.last_host = node.host;
  }
  for (const auto& nodes : needs_look) {
    for (const FleetNode* node : nodes) {
      if (overview.listed.size() < kMaxListedRows) {
        overview.listed.push_back(node);
      } else {
        ++overview.not_listed;
      }
    }
  }
  std::stable_sort(overview.passing.begin(), overview.passing.end(),
                   [](const PassingKind& a, const PassingKind& b) { return a.nodes > b.nodes; });
  return overview;
}

}  // namespace pcieval
