// The host-memory ceiling probe: see host_copy.hpp for the copy it times.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "bench/probe.hpp"
#include "model/evidence.hpp"

namespace pcieval {

// The NUMA nodes the host ceiling is measured on: those nearest a GPU of the
// evidence, or every node of the machine when no GPU's node is known (a host
// without GPUs still has a ceiling worth knowing). Ascending, no repeats.
[[nodiscard]] std::vector<int> host_ceiling_nodes(const Evidence& evidence, std::span<const int> machine_nodes);

[[nodiscard]] std::unique_ptr<Probe> make_host_ceiling_probe();

}  // namespace pcieval
