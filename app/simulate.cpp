#include "app/simulate.hpp"

#include <stdlib.h>  // mkdtemp, setenv

#include <algorithm>
#include <cstdlib>
#include <system_error>
#include <vector>

#include "sim/scenario.hpp"
#include "topology/hwloc_locality.hpp"
#include "topology/numa_memory.hpp"

namespace pcieval::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCudaLibrary = "libpcieval_sim_cuda.so";
constexpr const char* kNvmlLibrary = "libpcieval_sim_nvml.so";
constexpr const char* kNcclLibrary = "libpcieval_sim_nccl.so";

bool has_simulator(const fs::path& dir) {
  std::error_code code;
  return fs::exists(dir / kCudaLibrary, code) && fs::exists(dir / kNvmlLibrary, code);
}

}  // namespace

fs::path simulator_directory() {
  if (const char* chosen = std::getenv("PCIEVAL_SIM_DIR"); chosen != nullptr && *chosen != '\0') {
    return has_simulator(chosen) ? fs::path(chosen) : fs::path();
  }
  std::error_code code;
  const fs::path self = fs::read_symlink("/proc/self/exe", code);
  if (code) return {};
  const fs::path beside = self.parent_path() / "sim";
  return has_simulator(beside) ? beside : fs::path();
}

Result<std::unique_ptr<SimulatedNode>> SimulatedNode::prepare_instead_of(const std::string& scenario_file,
                                                                         bool machine_given,
                                                                         std::string_view machine_flags) {
  if (machine_given) {
    return make_error("--simulate reads the scenario's machine: it takes no " + std::string(machine_flags));
  }
  return prepare(scenario_file);
}

Result<std::unique_ptr<SimulatedNode>> SimulatedNode::prepare(const std::string& scenario_file) {
  auto scenario = sim::load_scenario(scenario_file);
  if (!scenario) return make_error("--simulate: " + scenario.error().message);
  const fs::path libraries = simulator_directory();
  if (libraries.empty()) {
    return make_error("--simulate: the simulator's libraries are not beside this pcieval (sim/" +
                      std::string(kCudaLibrary) +
                      "): use the build tree's build/pcieval, or name their folder with PCIEVAL_SIM_DIR");
  }
  std::unique_ptr<SimulatedNode> node(new SimulatedNode());
  node->scenario_file_ = scenario.value().file;
  std::string pattern = (fs::temp_directory_path() / "pcieval-sim-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return make_error("--simulate: cannot make a scratch folder in $TMPDIR");
  node->scratch_ = pattern;
  std::error_code code;
  // The tree's links are relative symlinks: copied as links, they resolve
  // inside the copy.
  fs::copy(scenario.value().machine / "sys", node->scratch_ / "sys",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks, code);
  if (code)
    return make_error("--simulate: cannot copy " + (scenario.value().machine / "sys").string() + ": " + code.message());
  node->sources_.sysfs_root = (node->scratch_ / "sys").string();
  if (fs::exists(scenario.value().machine / "topology.xml", code)) {
    node->sources_.topology_xml = (scenario.value().machine / "topology.xml").string();
  }
  const auto set = [](const char* name, const fs::path& value) { ::setenv(name, value.c_str(), 1); };
  set("PCIEVAL_CUDA_LIBRARY", libraries / kCudaLibrary);
  set("PCIEVAL_NVML_LIBRARY", libraries / kNvmlLibrary);
  set("PCIEVAL_NCCL_LIBRARY", libraries / kNcclLibrary);
  set("PCIEVAL_SIM_SCENARIO", node->scenario_file_);
  set("PCIEVAL_SIM_SYSFS", node->scratch_ / "sys");
  return Result<std::unique_ptr<SimulatedNode>>(std::move(node));
}

SimulatedNode::~SimulatedNode() {
  std::error_code code;
  if (!scratch_.empty()) fs::remove_all(scratch_, code);
}

void SimulatedNode::label(Evidence& evidence) const {
  evidence.host.simulated = true;
  evidence.notes.push_back("simulated node: scenario " + scenario_file_.string() +
                           "; every GPU, link reading and copy rate here is the simulator's model, not this host's");
  auto topology = HwlocTopology::load_live();
  if (!topology) return;
  const std::vector<int> nodes = numa_nodes(topology.value());
  bool folded = false;
  for (DeviceRecord& device : evidence.devices) {
    const auto here = [&nodes](int node) { return std::find(nodes.begin(), nodes.end(), node) != nodes.end(); };
    if (device.locality && device.locality->numa_node && !here(*device.locality->numa_node)) {
      device.locality->numa_node.reset();
      folded = true;
    }
    if (device.function.numa_node.ok() && device.function.numa_node.value() >= 0 &&
        !here(device.function.numa_node.value())) {
      device.function.numa_node = make_error("the scenario's NUMA node is not on this host");
      folded = true;
    }
  }
  if (folded) {
    evidence.notes.push_back(
        "simulated node: NUMA nodes of the scenario's machine that this host lacks are taken "
        "as unknown, so host buffers go where this host has memory");
  }
}

}  // namespace pcieval::app
