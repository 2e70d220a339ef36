#include "report/topo_tree.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "model/text.hpp"
#include "report/address_tree.hpp"

namespace pcieval {
namespace {

// "Gen4 x16"; a half that could not be read shows as "?" so the other half
// still tells something.
std::string state_text(const Reading<PcieGen>& speed, const Reading<int>& width) {
  if (!speed && !width) return "?";
  return (speed ? to_string(speed.value()) : std::string("Gen?")) + " x" +
         (width ? std::to_string(width.value()) : std::string("?"));
}

std::string port_link_text(const PortLinkReading& port) {
  return state_text(port.current_speed, port.current_width) + " (capable " +
         state_text(port.max_speed, port.max_width) + ")";
}

std::string device_text(const DeviceRecord& record) {
  const PciFunction& function = record.function;
  std::string text = to_string(function.bdf) + " " + std::string(to_string(function.kind)) + " " +
                     hex_text(function.vendor_id, 4) + ":" + hex_text(function.device_id, 4);
  if (function.is_virtual_function) text += " (virtual function)";
  text += " " + (function.link ? port_link_text(*function.link) : std::string("no link"));
  return text;
}

// The path read top-down: root port, then for each switch its upstream port
// (with the uplink above it) and downstream port, then the device. The role
// of each port follows from where it sits in a link, not from counting.
void insert_device(AddressTree& root, const DeviceRecord& record) {
  std::vector<TreeStep> bottom_up{{record.function.bdf, device_text(record)}};
  for (std::size_t i = 0; i < record.path.size(); ++i) {
    const Link& link = record.path[i];
    if (link.downstream != bottom_up.back().bdf) {
      bottom_up.push_back({link.downstream, to_string(link.downstream) + " switch upstream port, uplink " +
                                                port_link_text(link.downstream_end)});
    }
    const bool is_root = i + 1 == record.path.size();
    bottom_up.push_back(
        {link.upstream, to_string(link.upstream) + (is_root ? " root port" : " switch downstream port")});
  }
  insert_bottom_up(root, bottom_up);
}

void render(const AddressTree& node, int depth, std::string& out) {
  for (const AddressTree& child : node.children) {
    out.append(static_cast<std::size_t>(depth) * 2, ' ');
    out += child.line + "\n";
    render(child, depth + 1, out);
  }
}

// sysfs first, hwloc when the kernel does not say, as in the JSON document.
std::optional<int> numa_node_of(const DeviceRecord& record) {
  if (record.function.numa_node) return record.function.numa_node.value();
  if (record.locality) return record.locality->numa_node;
  return std::nullopt;
}

std::string count_text(int count, const std::string& singular, const std::string& plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

}  // namespace

std::string render_topology_tree(const Evidence& evidence) {
  // Known nodes in numeric order; "NUMA unknown" is printed after them.
  std::map<int, AddressTree> by_numa;
  AddressTree unknown_numa;
  std::vector<const DeviceRecord*> without_path;
  int gpus = 0;
  int nics = 0;
  int nvme = 0;

  for (const DeviceRecord& record : evidence.devices) {
    switch (record.function.kind) {
      case DeviceKind::kGpu:
        ++gpus;
        break;
      case DeviceKind::kNic:
        ++nics;
        break;
      case DeviceKind::kNvme:
        ++nvme;
        break;
      case DeviceKind::kOther:
        continue;
    }
    if (record.path.empty()) {
      without_path.push_back(&record);
      continue;
    }
    const std::optional<int> numa = numa_node_of(record);
    insert_device(numa ? by_numa[*numa] : unknown_numa, record);
  }

  std::string out;
  for (const auto& [numa, tree] : by_numa) {
    out += "NUMA " + std::to_string(numa) + "\n";
    render(tree, 1, out);
  }
  if (!unknown_numa.children.empty()) {
    out += "NUMA unknown\n";
    render(unknown_numa, 1, out);
  }
  if (!without_path.empty()) {
    out += "not behind a PCIe port\n";
    for (const DeviceRecord* record : without_path) out += "  " + device_text(*record) + "\n";
  }
  if (gpus > 0 && !evidence.gpus_under_load) {
    out += "note: GPU links were read idle; an idle NVIDIA GPU lowers its link speed on purpose\n";
  }
  out += count_text(gpus, "GPU", "GPUs") + ", " + count_text(nics, "NIC", "NICs") + ", " +
         count_text(nvme, "NVMe drive", "NVMe drives") + "\n";
  return out;
}

}  // namespace pcieval
