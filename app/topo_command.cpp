// `pcieval topo`: where every GPU, NIC and NVMe drive sits.
#include <iostream>

#include "app/commands.hpp"
#include "report/results_writer.hpp"
#include "report/topo_tree.hpp"
#include "topology/discover.hpp"

namespace pcieval::app {

int run_topo(const TopoOptions& options) {
  const auto evidence = discover(discovery_options(options.sources));
  if (!evidence) {
    print_error(evidence.error().message);
    return kExitUsage;
  }
  std::cout << (options.json ? devices_to_json(evidence.value()) : render_topology_tree(evidence.value()));
  return kExitPass;
}

}  // namespace pcieval::app
