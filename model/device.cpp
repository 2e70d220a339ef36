#include "model/device.hpp"

#include "model/enum_names.hpp"

namespace pcieval {
namespace {

constexpr EnumNames<DeviceKind, 4> kDeviceKindNames{
    {{DeviceKind::kGpu, "gpu"}, {DeviceKind::kNic, "nic"}, {DeviceKind::kNvme, "nvme"}, {DeviceKind::kOther, "other"}}};
static_assert(names_every_value_in_order(kDeviceKindNames));

constexpr EnumNames<PortRole, 4> kPortRoleNames{{{PortRole::kEndpoint, "endpoint"},
                                                 {PortRole::kRootPort, "root_port"},
                                                 {PortRole::kUpstreamPort, "switch_upstream_port"},
                                                 {PortRole::kDownstreamPort, "switch_downstream_port"}}};
static_assert(names_every_value_in_order(kPortRoleNames));

}  // namespace

std::string_view to_string(DeviceKind kind) { return name_of(kDeviceKindNames, kind, "other"); }

DeviceKind classify_device(std::uint16_t vendor_id, std::uint32_t class_code) {
  constexpr std::uint16_t kNvidia = 0x10de;
  const std::uint32_t base_and_sub = class_code >> 8;
  if (vendor_id == kNvidia && (base_and_sub == 0x0300 || base_and_sub == 0x0302)) return DeviceKind::kGpu;
  if ((class_code >> 16) == 0x02) return DeviceKind::kNic;
  if (class_code == 0x010802) return DeviceKind::kNvme;
  return DeviceKind::kOther;
}

bool is_pci_bridge_class(std::uint32_t class_code) { return (class_code >> 8) == 0x0604; }

std::string_view to_string(PortRole role) { return name_of(kPortRoleNames, role, "endpoint"); }

}  // namespace pcieval
