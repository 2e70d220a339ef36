#include "topology/hwloc_locality.hpp"

#include <hwloc.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "model/text.hpp"

namespace pcieval {
namespace {

// Creates a topology that keeps every I/O object: hwloc's default drops
// bridges, and the bridges are what the path is compared against.
Result<hwloc_topology_t> init_topology() {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) return make_error("hwloc_topology_init failed: " + errno_text(errno));
  if (hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) {
    const int err = errno;
    hwloc_topology_destroy(topology);
    return make_error("hwloc refused to keep I/O objects: " + errno_text(err));
  }
  return topology;
}

bool same_address(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci, const PciAddress& address) {
  return pci.domain == address.domain && pci.bus == address.bus && pci.dev == address.device &&
         pci.func == address.function;
}

// hwloc_get_pcidev_by_busid finds PCI devices only; root and switch ports are
// bridge objects whose upstream side carries the address.
hwloc_obj_t find_pci_bridge(hwloc_topology_t topology, const PciAddress& address) {
  for (hwloc_obj_t bridge = hwloc_get_next_bridge(topology, nullptr); bridge != nullptr;
       bridge = hwloc_get_next_bridge(topology, bridge)) {
    if (bridge->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI &&
        same_address(bridge->attr->bridge.upstream.pci, address)) {
      return bridge;
    }
  }
  return nullptr;
}

// hwloc 3 writes <topology version="3.0">, which hwloc 2.x refuses with a bare
// "Invalid argument". Saying which version the file is tells the operator
// that the file is fine and the library is old.
std::optional<std::string> xml_format_version(const std::filesystem::path& xml) {
  std::ifstream in(xml);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const std::string marker = "<topology version=\"";
  const auto start = head.find(marker);
  if (start == std::string::npos) return std::nullopt;
  const auto end = head.find('"', start + marker.size());
  if (end == std::string::npos) return std::nullopt;
  return head.substr(start + marker.size(), end - start - marker.size());
}

}  // namespace

Result<HwlocTopology> HwlocTopology::load_live() {
  auto topology = init_topology();
  if (!topology) return topology.error();
  HwlocTopology owner(topology.value());
  errno = 0;
  if (hwloc_topology_load(owner.topology_) != 0) return make_error("hwloc discovery failed: " + errno_text(errno));
  return owner;
}

Result<HwlocTopology> HwlocTopology::load_xml(const std::filesystem::path& xml) {
  const std::string name = xml.string();
  std::error_code ec;
  // hwloc reads a path it cannot open as a synthetic description and reports
  // nonsense about it, so the file is checked here first.
  if (!std::filesystem::exists(xml, ec)) return make_error("topology XML " + name + " does not exist");
  if (!std::filesystem::is_regular_file(xml, ec)) return make_error("topology XML " + name + " is not a file");
  if (!std::ifstream(xml).good()) return make_error("topology XML " + name + " cannot be read");
  auto topology = init_topology();
  if (!topology) return topology.error();
  HwlocTopology owner(topology.value());
  // hwloc's XML importer prints its own multi-line complaints on stderr; the
  // error returned here says it in one line. A caller's setting is kept.
  ::setenv("HWLOC_XML_VERBOSE", "0", 0);
  if (hwloc_topology_set_xml(owner.topology_, name.c_str()) != 0 || hwloc_topology_load(owner.topology_) != 0) {
    const auto version = xml_format_version(xml);
    if (version && !version->empty() && version->front() > '2') {
      return make_error("topology XML " + name + " is hwloc XML version " + *version + ", newer than hwloc " +
                        HWLOC_VERSION + " can read (export it with an hwloc 2.x `lstopo --of xml`)");
    }
    return make_error("topology XML " + name + " is not an hwloc XML topology that hwloc " + HWLOC_VERSION +
                      " can load (write one with `lstopo --of xml`)");
  }
  return owner;
}

HwlocTopology::HwlocTopology(HwlocTopology&& other) noexcept : topology_(std::exchange(other.topology_, nullptr)) {}

HwlocTopology& HwlocTopology::operator=(HwlocTopology&& other) noexcept {
  if (this != &other) {
    if (topology_ != nullptr) hwloc_topology_destroy(topology_);
    topology_ = std::exchange(other.topology_, nullptr);
  }
  return *this;
}

HwlocTopology::~HwlocTopology() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

std::optional<Locality> HwlocTopology::locality_of(const PciAddress& address) const {
  if (topology_ == nullptr) return std::nullopt;
  hwloc_obj_t device =
      hwloc_get_pcidev_by_busid(topology_, address.domain, address.bus, address.device, address.function);
  if (device == nullptr) device = find_pci_bridge(topology_, address);
  if (device == nullptr) return std::nullopt;

  Locality locality;
  if (hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology_, device); anchor != nullptr) {
    // A device is attached to a package or a group; its NUMA node is the
    // first in that object's nodeset (nodesets are indexed by OS index).
    if (anchor->nodeset != nullptr) {
      const int node = hwloc_bitmap_first(anchor->nodeset);
      if (node >= 0) locality.numa_node = node;
    }
    if (anchor->cpuset != nullptr && !hwloc_bitmap_iszero(anchor->cpuset)) {
      char* text = nullptr;
      if (hwloc_bitmap_list_asprintf(&text, anchor->cpuset) >= 0 && text != nullptr) locality.cpulist = text;
      std::free(text);  // NOLINT(cppcoreguidelines-no-malloc): hwloc allocates with malloc
    }
  }
  for (hwloc_obj_t parent = device->parent; parent != nullptr && hwloc_obj_type_is_io(parent->type) != 0;
       parent = parent->parent) {
    if (parent->type != HWLOC_OBJ_BRIDGE || parent->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI) continue;
    const auto& pci = parent->attr->bridge.upstream.pci;
    locality.ancestor_bridges.push_back(PciAddress{pci.domain, pci.bus, pci.dev, pci.func});
  }
  return locality;
}

}  // namespace pcieval
