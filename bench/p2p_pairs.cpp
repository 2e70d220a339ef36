#include "bench/p2p_pairs.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "bench/gpu_groups.hpp"

namespace pcieval {
namespace {

// The root port above a GPU: the upstream end of its path's last link.
std::optional<PciAddress> root_port_of(const DeviceRecord& gpu) {
  if (gpu.path.empty()) return std::nullopt;
  return gpu.path.back().upstream;
}

std::pair<PciAddress, PciAddress> ordered(const PciAddress& a, const PciAddress& b) {
  return a < b ? std::make_pair(a, b) : std::make_pair(b, a);
}

}  // namespace

P2pPairPlan plan_p2p_pairs(const Evidence& evidence) {
  const std::vector<const DeviceRecord*> gpus = gpus_of(evidence);
  P2pPairPlan plan;
  if (gpus.size() <= kAllP2pPairsUpToGpus) {
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      for (std::size_t j = i + 1; j < gpus.size(); ++j) {
        plan.pairs.push_back(ordered(gpus[i]->function.bdf, gpus[j]->function.bdf));
      }
    }
    std::sort(plan.pairs.begin(), plan.pairs.end());
    return plan;
  }
  std::set<std::pair<PciAddress, PciAddress>> chosen;
  for (const GpuGroup& group : group_gpus_by_uplink(evidence)) {
    for (std::size_t i = 0; i < group.gpus.size(); ++i) {
      for (std::size_t j = i + 1; j < group.gpus.size(); ++j) chosen.insert(ordered(group.gpus[i], group.gpus[j]));
    }
  }
  std::map<PciAddress, PciAddress> first_below_root;  // root port -> its first GPU (gpus_of is by address)
  for (const DeviceRecord* gpu : gpus) {
    if (auto root = root_port_of(*gpu)) first_below_root.emplace(*root, gpu->function.bdf);
  }
  for (auto a = first_below_root.begin(); a != first_below_root.end(); ++a) {
    for (auto b = std::next(a); b != first_below_root.end(); ++b) chosen.insert(ordered(a->second, b->second));
  }
  plan.pairs.assign(chosen.begin(), chosen.end());
  const std::size_t all = gpus.size() * (gpus.size() - 1) / 2;
  std::string listed;
  for (const auto& [a, b] : plan.pairs) listed += (listed.empty() ? "" : ", ") + to_string(a) + "/" + to_string(b);
  plan.sampled_note = std::to_string(gpus.size()) + " GPUs: a sample of " + std::to_string(plan.pairs.size()) + " of " +
                      std::to_string(all) +
                      " pairs was measured (each GPU with its switch neighbours, and one pair per pair of root "
                      "ports): " +
                      listed;
  return plan;
}

std::string p2p_subject(const PciAddress& initiator, const PciAddress& peer) {
  return to_string(initiator) + "->" + to_string(peer);
}

}  // namespace pcieval
