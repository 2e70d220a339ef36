#include "bench/gpu_groups.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace pcieval {
namespace {

// The port a GPU's traffic shares with its neighbours; nullopt for an empty
// path.
std::optional<PciAddress> shared_port_of(const PciPath& path) {
  if (path.empty()) return std::nullopt;
  const auto uplink =
      std::find_if(path.begin(), path.end(), [](const Link& link) { return link.position == LinkPosition::kUplink; });
  if (uplink != path.end()) return uplink->downstream;
  return path.back().upstream;
}

}  // namespace

std::vector<const DeviceRecord*> gpus_of(const Evidence& evidence) {
  std::vector<const DeviceRecord*> gpus;
  for (const DeviceRecord& device : evidence.devices) {
    if (device.function.kind == DeviceKind::kGpu && device.function.bdf.function == 0) gpus.push_back(&device);
  }
  return gpus;
}

std::vector<GpuGroup> group_gpus_by_uplink(const Evidence& evidence) {
  std::map<PciAddress, std::vector<PciAddress>> by_port;
  for (const DeviceRecord* gpu : gpus_of(evidence)) {
    if (auto port = shared_port_of(gpu->path)) by_port[*port].push_back(gpu->function.bdf);
  }
  std::vector<GpuGroup> groups;
  groups.reserve(by_port.size());
  for (auto& [port, gpus] : by_port) {
    std::sort(gpus.begin(), gpus.end());
    groups.push_back(GpuGroup{port, "port " + to_string(port), std::move(gpus)});
  }
  return groups;
}

std::vector<GpuGroup> shared_uplink_groups(const Evidence& evidence) {
  std::vector<GpuGroup> groups = group_gpus_by_uplink(evidence);
  std::erase_if(groups, [](const GpuGroup& group) { return group.gpus.size() < 2; });
  return groups;
}

}  // namespace pcieval
