#include "fleet/fleet_allreduce.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "fleet/fleet.hpp"
#include "model/text.hpp"

namespace pcieval {
namespace {

double bus_factor(int ranks) {
  return ranks < 1 ? 0 : 2.0 * static_cast<double>(ranks - 1) / static_cast<double>(ranks);
}

// "node-a, node-b and 3 more"
std::string names(const std::vector<std::string>& hosts) {
  constexpr std::size_t kAtMost = 3;
  std::string text;
  for (std::size_t i = 0; i < hosts.size() && i < kAtMost; ++i) text += (i == 0 ? "" : ", ") + hosts[i];
  if (hosts.size() > kAtMost) text += " and " + std::to_string(hosts.size() - kAtMost) + " more";
  return text;
}

}  // namespace

std::string_view to_string(FleetAllReduceStatus status) {
  switch (status) {
    case FleetAllReduceStatus::kMeasured:
      return "measured";
    case FleetAllReduceStatus::kSkipped:
      return "skipped";
    case FleetAllReduceStatus::kFailed:
      return "failed";
  }
  return "skipped";
}

AllReducePlan plan_fleet_allreduce(const std::vector<AllReduceOffer>& offers) {
  AllReducePlan plan;
  if (offers.size() < 2) {
    plan.reason = "a fleet of one node: its GPUs together are the node's own allreduce_nccl probes";
    return plan;
  }
  // Nodes that cannot take part, grouped by why, so 500 nodes without NCCL
  // are one line.
  std::map<std::string, std::vector<std::string>> why_not;
  for (const AllReduceOffer& offer : offers) {
    if (!offer.why_not.empty()) {
      why_not[offer.why_not].push_back(offer.host);
    } else if (offer.gpus < 1) {
      why_not["no GPU"].push_back(offer.host);
    }
  }
  if (!why_not.empty()) {
    std::string reason = "not every node can take part: ";
    bool first = true;
    for (const auto& [why, hosts] : why_not) {
      reason +=
          (first ? "" : "; ") + (hosts.size() == offers.size() ? std::string("every node") : names(hosts)) + ": " + why;
      first = false;
    }
    plan.reason = std::move(reason);
    return plan;
  }
  for (const AllReduceOffer& offer : offers) {
    plan.first_ranks.push_back(plan.total_ranks);
    plan.total_ranks += offer.gpus;
  }
  plan.go = true;
  return plan;
}

FleetAllReduce measured_fleet_allreduce(int nodes, int gpus, std::uint64_t size_bytes,
                                        const std::vector<std::vector<double>>& node_trial_s,
                                        std::vector<std::string> notes) {
  FleetAllReduce entry;
  entry.nodes = nodes;
  entry.gpus = gpus;
  entry.size_bytes = size_bytes;
  entry.notes = std::move(notes);
  entry.status = FleetAllReduceStatus::kFailed;
  const std::size_t trials = node_trial_s.empty() ? 0 : node_trial_s.front().size();
  const bool shaped = trials > 0 && std::all_of(node_trial_s.begin(), node_trial_s.end(),
                                                [&](const std::vector<double>& t) { return t.size() == trials; });
  if (!shaped) {
    entry.reason = "the nodes reported different numbers of trials";
    return entry;
  }
  std::vector<double> algbw;
  for (std::size_t trial = 0; trial < trials; ++trial) {
    double slowest_s = 0;
    for (const std::vector<double>& node : node_trial_s) slowest_s = std::max(slowest_s, node[trial]);
    if (!(slowest_s > 0)) {
      entry.reason = "trial " + std::to_string(trial + 1) + " reported no time";
      return entry;
    }
    algbw.push_back(static_cast<double>(size_bytes) / slowest_s / 1e9);
  }
  for (double rate : algbw) entry.trials_busbw_gbps.push_back(rate * bus_factor(gpus));
  std::vector<double> sorted = algbw;
  entry.median_algbw_gbps = median_of(sorted);
  entry.median_busbw_gbps = entry.median_algbw_gbps * bus_factor(gpus);
  entry.status = FleetAllReduceStatus::kMeasured;
  return entry;
}

std::string describe_fleet_allreduce(const FleetAllReduce& allreduce) {
  if (allreduce.status == FleetAllReduceStatus::kSkipped) return "fleet all-reduce skipped: " + allreduce.reason;
  std::string who = "over " + std::to_string(allreduce.nodes) + " node" + (allreduce.nodes == 1 ? "" : "s") + ", " +
                    std::to_string(allreduce.gpus) + " GPU" + (allreduce.gpus == 1 ? "" : "s");
  who += " at " + binary_size_text(static_cast<double>(allreduce.size_bytes));
  if (allreduce.status == FleetAllReduceStatus::kFailed)
    return "fleet all-reduce " + who + " failed: " + allreduce.reason;
  char rates[96];
  std::snprintf(rates, sizeof rates, "busbw %.2f GB/s (algbw %.2f)", allreduce.median_busbw_gbps,
                allreduce.median_algbw_gbps);
  return "fleet all-reduce " + who + ": " + rates + ", median of " +
         std::to_string(allreduce.trials_busbw_gbps.size()) + " trials; measured, not judged";
}

void attach_fleet_allreduce(Fleet& fleet, FleetAllReduce allreduce) {
  if (allreduce.status == FleetAllReduceStatus::kFailed) {
    if (fleet.overall == Overall::kPass) fleet.overall = Overall::kInconclusive;
    fleet.exit_code = worse_exit_code(fleet.exit_code, kExitInconclusive);
    fleet.summary += "; the fleet all-reduce failed: " + allreduce.reason;
  }
  fleet.allreduce = std::move(allreduce);
}

}  // namespace pcieval
