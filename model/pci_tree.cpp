#include "model/pci_tree.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace pcieval {
namespace {

const PciFunction* find_function(const std::vector<PciFunction>& functions, const PciAddress& address) {
  const auto it = std::find_if(functions.begin(), functions.end(),
                               [&](const PciFunction& function) { return function.bdf == address; });
  return it == functions.end() ? nullptr : &*it;
}

PortLinkReading link_reading_of(const PciFunction& function) {
  if (function.link) return *function.link;
  return PortLinkReading::without_link(to_string(function.bdf));
}

// The function that owns the physical link `function` sits on. Every function
// of one device shares the device's link, and function 0 is the one whose
// registers describe it: the others may claim a capability of their own
// (a Switchtec switch's management endpoint 81:00.1 says LnkCap x16 where
// its function 0, the switch upstream port, says x2; both run x2). So a
// function other than 0 is replaced by its function 0 where that is a switch
// upstream port (a bridge, so no device of its own that would be judged) in
// the tree, on the same link (same parent) and with link registers. Where
// function 0 is an endpoint it is judged itself and the other functions are
// not (validate/link_rules.hpp), so their paths stay their own. SR-IOV
// virtual functions keep theirs: under ARI a VF's "function 0" is another VF.
const PciFunction* link_owner(const std::vector<PciFunction>& functions, const PciFunction& function) {
  if (function.bdf.function == 0 || function.is_virtual_function) return &function;
  PciAddress zero = function.bdf;
  zero.function = 0;
  const PciFunction* owner = find_function(functions, zero);
  if (owner == nullptr || owner->is_virtual_function || !owner->link || owner->parent != function.parent ||
      owner->role != PortRole::kUpstreamPort) {
    return &function;
  }
  return owner;
}

class RoleResolver {
 public:
  explicit RoleResolver(const std::vector<PciFunction>& functions) : functions_(functions) {}

  PortRole role_of(const PciFunction& function) {
    if (!function.is_bridge) return PortRole::kEndpoint;
    if (const auto known = roles_.find(function.bdf); known != roles_.end()) return known->second;
    // sysfs is a tree, but a hand-built vector might loop: a chain deeper than
    // the number of functions is cut there.
    if (depth_ > functions_.size()) return PortRole::kRootPort;
    PortRole role = PortRole::kRootPort;
    const PciFunction* parent = function.parent ? find_function(functions_, *function.parent) : nullptr;
    if (parent != nullptr) {
      ++depth_;
      const PortRole parent_role = role_of(*parent);
      --depth_;
      role = parent_role == PortRole::kUpstreamPort ? PortRole::kDownstreamPort : PortRole::kUpstreamPort;
    }
    roles_[function.bdf] = role;
    return role;
  }

 private:
  const std::vector<PciFunction>& functions_;
  std::map<PciAddress, PortRole> roles_;
  std::size_t depth_ = 0;
};

}  // namespace

std::vector<PciFunction> assign_port_roles(std::vector<PciFunction> functions) {
  std::vector<PortRole> roles;
  roles.reserve(functions.size());
  {
    RoleResolver resolver(functions);
    for (const auto& function : functions) roles.push_back(resolver.role_of(function));
  }
  for (std::size_t i = 0; i < functions.size(); ++i) functions[i].role = roles[i];
  return functions;
}

PciPath build_path(const std::vector<PciFunction>& functions, const PciAddress& device) {
  PciPath path;
  const PciFunction* current = find_function(functions, device);
  if (current == nullptr || !current->link) return path;
  for (std::size_t step = 0; step < functions.size(); ++step) {
    current = link_owner(functions, *current);
    if (!current->parent) break;
    const PciFunction* port = find_function(functions, *current->parent);
    if (port == nullptr) break;
    path.push_back(
        Link{current->bdf, port->bdf, path.empty() ? LinkPosition::kDeviceLink : LinkPosition::kUplink,
             link_reading_of(*current), link_reading_of(*port),
             port->vendor_id != 0 ? std::optional<PciId>(PciId{port->vendor_id, port->device_id}) : std::nullopt});
    if (port->role == PortRole::kRootPort) break;
    if (port->role == PortRole::kDownstreamPort) {
      // Downstream port to its own upstream port is inside the switch: the
      // next physical link starts at the upstream port.
      if (!port->parent) break;
      current = find_function(functions, *port->parent);
      if (current == nullptr) break;
    } else {
      // A device directly under an upstream-role bridge (a PCIe-to-PCI bridge
      // such as a BMC's): the link above that bridge is physical too.
      current = port;
    }
  }
  return path;
}

std::vector<PciAddress> bridge_chain(const std::vector<PciFunction>& functions, const PciAddress& device) {
  std::vector<PciAddress> chain;
  const PciFunction* current = find_function(functions, device);
  while (current != nullptr && current->parent && chain.size() < functions.size()) {
    chain.push_back(*current->parent);
    current = find_function(functions, *current->parent);
  }
  return chain;
}

}  // namespace pcieval
