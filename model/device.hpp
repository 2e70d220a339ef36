// A PCI function as discovered: identity, class, locality and its own link.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/link.hpp"
#include "model/pci_address.hpp"
#include "model/port_settings.hpp"
#include "model/result.hpp"

namespace pcieval {

// What the device is, for the operator. Bridges are not a kind: they are the
// ports that make up a device's path.
enum class DeviceKind { kGpu, kNic, kNvme, kOther };

[[nodiscard]] std::string_view to_string(DeviceKind kind);  // "gpu", "nic", "nvme", "other"

// NVIDIA (10de) display (0300) or 3D (0302) controllers are GPUs; class 02 is
// network (Ethernet 0200, InfiniBand 0207); 010802 is NVMe. class_code is the
// 24-bit class/subclass/prog-if of sysfs `class`.
[[nodiscard]] DeviceKind classify_device(std::uint16_t vendor_id, std::uint32_t class_code);

// PCI-to-PCI bridge (060400 / 060401): a root port or a switch port.
[[nodiscard]] bool is_pci_bridge_class(std::uint32_t class_code);

// Where a port sits, inferred from the device hierarchy: a bridge directly under
// a host bridge is a root port; a bridge under a root or downstream port is a
// switch upstream port; a bridge under an upstream port is a downstream port.
enum class PortRole { kEndpoint, kRootPort, kUpstreamPort, kDownstreamPort };

[[nodiscard]] std::string_view to_string(PortRole role);

// AER counters of one sysfs file (aer_dev_correctable, _fatal, _nonfatal):
// the non-zero named counters (an absent name counted 0) and the TOTAL_ERR_*
// line.
struct AerCounters {
  std::map<std::string, std::uint64_t> counts;
  std::optional<std::uint64_t> total;
};

struct AerReadings {
  std::optional<AerCounters> correctable;  // nullopt: the file is absent (AER off)
  std::optional<AerCounters> fatal;
  std::optional<AerCounters> nonfatal;
};

struct PciFunction {
  PciAddress bdf;
  // The bridge above this function in the device hierarchy; nullopt when it
  // sits directly under a host bridge.
  std::optional<PciAddress> parent;
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint32_t class_code = 0;
  DeviceKind kind = DeviceKind::kOther;
  bool is_bridge = false;
  PortRole role = PortRole::kEndpoint;
  bool is_virtual_function = false;                 // SR-IOV VF: no link of its own
  Reading<int> numa_node = make_error("not read");  // -1 from sysfs is an error "no NUMA affinity"
  Reading<std::string> local_cpulist = make_error("not read");
  // nullopt when the function exposes no PCIe link attributes at all
  // (conventional PCI, root-complex integrated endpoints, VMs' virtio).
  std::optional<PortLinkReading> link;
  AerReadings aer;
  // Schema 1.7. The device's IOMMU group; nullopt when not read (captured
  // text, older documents).
  std::optional<IommuReading> iommu;
};

}  // namespace pcieval
