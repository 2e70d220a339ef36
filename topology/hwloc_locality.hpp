// hwloc's view of where a PCI device sits: NUMA node, nearby CPUs, bridges.
#pragma once

#include <filesystem>
#include <optional>

#include "model/evidence.hpp"
#include "model/pci_address.hpp"
#include "model/result.hpp"

// hwloc's handle type, declared here so that users of this header need not see
// hwloc.h (the topology layer links hwloc privately).
struct hwloc_topology;

namespace pcieval {

// An hwloc topology with every I/O object kept (bridges included). Move-only;
// the destructor destroys the topology.
class HwlocTopology {
 public:
  // Discovers the machine this runs on.
  [[nodiscard]] static Result<HwlocTopology> load_live();
  // Loads an `lstopo --of xml` file. A missing or malformed file is an error
  // whose one-line message names the file.
  [[nodiscard]] static Result<HwlocTopology> load_xml(const std::filesystem::path& xml);

  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  HwlocTopology(HwlocTopology&& other) noexcept;
  HwlocTopology& operator=(HwlocTopology&& other) noexcept;
  ~HwlocTopology();

  // The locality of a PCI device or PCI-to-PCI bridge; nullopt when hwloc
  // does not list it. The NUMA node is the first
  // node of the nearest non-I/O ancestor; the bridges are the PCI-to-PCI
  // bridges above the device, nearest first, host bridges left out.
  [[nodiscard]] std::optional<Locality> locality_of(const PciAddress& address) const;

  // The raw handle, for topology/ code that calls hwloc itself (numa_memory).
  [[nodiscard]] hwloc_topology* handle() const { return topology_; }

 private:
  explicit HwlocTopology(hwloc_topology* topology) : topology_(topology) {}

  hwloc_topology* topology_ = nullptr;
};

}  // namespace pcieval
