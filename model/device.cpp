#include "model/device.hpp"

namespace pcieval {

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kNic:
      return "nic";
    case DeviceKind::kNvme:
      return "nvme";
    case DeviceKind::kOther:
      return "other";
  }
  return "other";
}

DeviceKind classify_device(std::uint16_t vendor_id, std::uint32_t class_code) {
  constexpr std::uint16_t kNvidia = 0x10de;
  const std::uint32_t base_and_sub = class_code >> 8;
  if (vendor_id == kNvidia && (base_and_sub == 0x0300 || base_and_sub == 0x0302)) return DeviceKind::kGpu;
  if ((class_code >> 16) == 0x02) return DeviceKind::kNic;
  if (class_code == 0x010802) return DeviceKind::kNvme;
  return DeviceKind::kOther;
}

bool is_pci_bridge_class(std::uint32_t class_code) { return (class_code >> 8) == 0x0604; }

std::string_view to_string(PortRole role) {
  switch (role) {
    case PortRole::kEndpoint:
      return "endpoint";
    case PortRole::kRootPort:
      return "root_port";
    case PortRole::kUpstreamPort:
      return "switch_upstream_port";
    case PortRole::kDownstreamPort:
      return "switch_downstream_port";
  }
  return "endpoint";
}

}  // namespace pcieval
