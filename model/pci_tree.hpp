// The PCI hierarchy as sysfs shows it: port roles and each device's path of
// physical links up to its root port. Pure functions, no I/O.
#pragma once

#include <vector>

#include "model/device.hpp"
#include "model/path.hpp"
#include "model/pci_address.hpp"

namespace pcieval {

// Sets `role` of every function from the hierarchy: a bridge with no parent is
// a root port; a bridge under a root port or a switch downstream port is a
// switch upstream port; a bridge under an upstream port is a downstream port.
// Non-bridges are endpoints. A bridge whose parent is not among `functions` is
// taken for a root port.
[[nodiscard]] std::vector<PciFunction> assign_port_roles(std::vector<PciFunction> functions);

// The physical links from `device` up to its root port, device link first.
// Each step joins a port to the port above it; the hop from a switch
// downstream port to its own upstream port is internal to the switch and is
// skipped. Empty when the device exposes no PCIe link attributes, is not in
// `functions`, or sits directly under a host bridge. A port in the chain with
// no link attributes gives error readings that say so
// (PortLinkReading::without_link). A link's downstream end is the function
// that owns it: a function other than 0 whose function 0 is a switch upstream
// port on the same link (a Switchtec or PLX switch's management endpoint)
// gets function 0's link, its BDF and readings, since every function of a
// device shares function 0's physical link. (Where function 0 is an endpoint
// it is judged itself, and its other functions are not.)
// REQUIRES: roles assigned (assign_port_roles).
[[nodiscard]] PciPath build_path(const std::vector<PciFunction>& functions, const PciAddress& device);

// Every bridge above `device`, nearest first, ending at its root port: the
// chain hwloc's ancestor list is compared with.
[[nodiscard]] std::vector<PciAddress> bridge_chain(const std::vector<PciFunction>& functions, const PciAddress& device);

}  // namespace pcieval
