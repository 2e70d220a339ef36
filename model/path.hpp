// A device's path to the root complex: the chain of physical links above it.
#pragma once

#include <optional>
#include <string>
#include <utility>
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
  // The state the link trained to, where the evidence settles it: both ends'
  // LnkSta read and agree (both describe one link), or one end has no link
  // registers at all (PortLinkReading::has_no_link) and the other end's reads.
  // An error otherwise, never a guess: one naming the end and its reading when
  // a reading is missing or broken (a width of 63 or 0, "Unknown", garbage),
  // one naming both ends and their states when they disagree.
  [[nodiscard]] Reading<LinkState> negotiated() const;
  // Both ends' negotiated states, downstream first, when both were read and
  // they differ (negotiated() is then an error); nullopt otherwise. Which end
  // is right is unknown: validate/expectation.hpp says what such a link proves.
  [[nodiscard]] std::optional<std::pair<LinkState, LinkState>> disagreement() const;
};

// Links from the device upward: path[0] is the device's own link, the last one
// ends at a root port.
using PciPath = std::vector<Link>;

}  // namespace pcieval
