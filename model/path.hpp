// A device's path to the root complex: the chain of physical links above it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/link.hpp"
#include "model/pci_address.hpp"

namespace pcieval {

// Which link of the path this is. Only a device's own link can be lowered by
// the device's power management; anything above a switch upstream port is
// shared and is judged as read.
enum class LinkPosition {
  kDeviceLink,  // the device to the port above it
  kUplink,      // a switch upstream port to the port above it
};

[[nodiscard]] std::string_view to_string(LinkPosition position);

// A physical link joins two ports. `downstream` is the end further from the
// root (an endpoint or a switch upstream port); `upstream` is a root port or a
// switch downstream port. Links inside a switch (downstream port to its own
// upstream port) are not physical and never appear here.
struct Link {
  PciAddress downstream;
  PciAddress upstream;
  LinkPosition position = LinkPosition::kDeviceLink;
  PortLinkReading downstream_end;
  PortLinkReading upstream_end;
  // The upstream port's IDs where the evidence has them (sysfs, lspci -nn):
  // an emulated port (a VM's) describes no physical link (validate/expectation.hpp).
  std::optional<PciId> upstream_id;

  // The lower of both ends' capabilities: what the link should train to.
  [[nodiscard]] Reading<LinkState> expected() const;
  // The state the link trained to: the downstream end's LnkSta, or the upstream
  // end's when the downstream end's cannot be read (both describe one link).
  [[nodiscard]] Reading<LinkState> negotiated() const;
};

// Links from the device upward: path[0] is the device's own link, the last one
// ends at a root port.
using PciPath = std::vector<Link>;

}  // namespace pcieval
