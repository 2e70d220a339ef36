// `pcieval check --simulate SCENARIO` (and PCIEVAL_SIMULATE): the whole check,
// probes included, on a simulated GPU node (sim/README.md). pcieval itself
// changes nothing but where it loads the CUDA driver and NVML from: the
// simulator's libraries, beside the binary in sim/. The scenario's machine
// tree is copied to a scratch folder that the simulator keeps current (its
// GPUs' link state), and read as --sysfs-root reads a tree. The document
// says host.simulated and the summary "simulated node": a simulated number
// is never taken for a measurement.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "app/commands.hpp"
#include "model/evidence.hpp"
#include "model/result.hpp"

namespace pcieval::app {

// The scratch copy of a scenario's machine, removed when this goes.
class SimulatedNode {
 public:
  SimulatedNode(const SimulatedNode&) = delete;
  SimulatedNode& operator=(const SimulatedNode&) = delete;
  ~SimulatedNode();

  // Checks the scenario (exit 2 material: a bad file, a machine without the
  // GPUs it names, no simulator beside this binary), copies its machine's
  // sys/ to a scratch folder under $TMPDIR, and points PCIEVAL_CUDA_LIBRARY,
  // PCIEVAL_NVML_LIBRARY, PCIEVAL_NCCL_LIBRARY, PCIEVAL_SIM_SCENARIO and
  // PCIEVAL_SIM_SYSFS at the simulator. Call before any thread starts
  // (setenv).
  [[nodiscard]] static Result<std::unique_ptr<SimulatedNode>> prepare(const std::string& scenario_file);
  // prepare() for a command that can also read a machine given by
  // `machine_flags`: refused when `machine_given`, since the scenario brings
  // its own.
  [[nodiscard]] static Result<std::unique_ptr<SimulatedNode>> prepare_instead_of(const std::string& scenario_file,
                                                                                 bool machine_given,
                                                                                 std::string_view machine_flags);

  // Where to read the machine from: the scratch tree and the scenario's
  // topology.xml when it has one.
  [[nodiscard]] const SourceOptions& sources() const { return sources_; }

  // Marks the evidence simulated, says which scenario in a note, and takes
  // the NUMA node of a device as unknown where this host has no such node
  // (the scenario's machine is not this one; on a one-node host every buffer
  // is then local).
  void label(Evidence& evidence) const;

 private:
  SimulatedNode() = default;

  std::filesystem::path scratch_;
  std::filesystem::path scenario_file_;
  SourceOptions sources_;
};

// The folder that holds the simulator's libraries: $PCIEVAL_SIM_DIR, else
// sim/ beside this executable. Empty when neither has them.
[[nodiscard]] std::filesystem::path simulator_directory();

}  // namespace pcieval::app
