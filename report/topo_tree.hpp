// The human view of `pcieval topo`: where every GPU, NIC and NVMe drive sits.
#pragma once

#include <string>

#include "model/evidence.hpp"

namespace pcieval {

// GPUs, NICs and NVMe drives (kind other is left out) grouped by NUMA node,
// each under its root port and switch ports, as read from the device paths.
// Devices without a path are listed last under "not behind a PCIe port". The
// last line counts the devices: "8 GPUs, 4 NICs, 2 NVMe drives".
[[nodiscard]] std::string render_topology_tree(const Evidence& evidence);

}  // namespace pcieval
