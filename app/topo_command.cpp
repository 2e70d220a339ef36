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
  // The tree shows names read from sysfs and --topology-xml, as a terminal may print them.
  std::cout << (options.json ? devices_to_json(evidence.value())
                             : terminal_lines(render_topology_tree(evidence.value())));
  return kExitPass;
}

}  // namespace pcieval::app
