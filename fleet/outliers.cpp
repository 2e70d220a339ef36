// The outlier rule of fleet.hpp: robust statistics per group of like GPUs.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "fleet/fleet.hpp"

namespace pcieval {
namespace {

using GroupKey = std::tuple<std::string, std::string, std::string, Direction>;  // device id, link, probe, direction

struct Member {
  const FleetNode* node;
  const FleetGpuMeasurement* gpu;
};

}  // namespace

void find_outliers(const std::vector<FleetNode>& nodes, const OutlierRule& rule, std::vector<FleetGroup>& groups,
                   std::vector<FleetOutlier>& outliers) {
  groups.clear();
  outliers.clear();
  std::map<GroupKey, std::vector<Member>> members;
  for (const FleetNode& node : nodes) {
    for (const FleetGpuMeasurement& gpu : node.gpus) {
      // A GPU whose model or expected link is unknown could be compared with
      // GPUs that should run at another rate: it joins no group.
      if (gpu.device_id == "unknown" || gpu.link == "unknown") continue;
      if (!std::isfinite(gpu.median_gbps)) continue;
      members[GroupKey{gpu.device_id, gpu.link, gpu.probe, gpu.direction}].push_back(Member{&node, &gpu});
    }
  }
  for (const auto& [key, group_members] : members) {
    std::vector<double> medians;
    medians.reserve(group_members.size());
    for (const Member& m : group_members) medians.push_back(m.gpu->median_gbps);
    FleetGroup group;
    std::tie(group.device_id, group.link, group.probe, group.direction) = key;
    group.model = group_members.front().gpu->model;
    group.gpus = group_members.size();
    group.median_gbps = median_of(medians);
    std::vector<double> deviations;
    deviations.reserve(group_members.size());
    for (const Member& m : group_members) deviations.push_back(std::fabs(m.gpu->median_gbps - group.median_gbps));
    group.mad_gbps = median_of(deviations);
    group.judged = group.gpus >= rule.min_group_size;
    if (group.judged) {
      const double robust_cut = group.median_gbps - rule.k * kMadToSigma * group.mad_gbps;
      const double fraction_cut = rule.max_fraction_of_median * group.median_gbps;
      // Both tests must hold, so the threshold is the lower of the two cuts.
      group.threshold_gbps = std::min(robust_cut, fraction_cut);
      for (const Member& m : group_members) {
        if (!(m.gpu->median_gbps < group.threshold_gbps)) continue;
        outliers.push_back(FleetOutlier{m.node->host, m.gpu->gpu, group.device_id, group.model, group.link, group.probe,
                                        group.direction, m.gpu->median_gbps, group.median_gbps, group.mad_gbps,
                                        group.threshold_gbps, group.gpus});
      }
    }
    groups.push_back(std::move(group));
  }
  // The slowest relative to its group first: the one to look at first.
  std::stable_sort(outliers.begin(), outliers.end(), [](const FleetOutlier& a, const FleetOutlier& b) {
    return a.median_gbps * b.group_median_gbps < b.median_gbps * a.group_median_gbps;
  });
}

}  // namespace pcieval
