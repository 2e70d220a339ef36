#include "bench/gpu_preconditions.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace pcieval {

bool launch_blocking_requested(const char* value) { return value != nullptr && std::string_view(value) == "1"; }

std::optional<std::string> launch_blocking_skip_reason(bool launch_blocking) {
  if (!launch_blocking) return std::nullopt;
  return "CUDA_LAUNCH_BLOCKING=1 is set: every launch waits for its kernel, so the latch kernel that starts each "
         "trial would block the host until it times out; unset it to measure";
}

std::optional<std::string> confidential_computing_skip_reason(std::optional<bool> confidential_computing) {
  if (!confidential_computing.value_or(false)) return std::nullopt;
  return "the GPUs run in confidential-computing mode: host memory can be neither registered (cudaHostRegister) "
         "nor mapped for the GPU, so pinned, latched copies cannot run";
}

std::optional<std::string> remote_numa_skip_reason(std::size_t machine_nodes,
                                                   std::span<const std::optional<int>> gpu_nodes) {
  if (machine_nodes < 2) {
    return "this machine has one NUMA node: there is no remote node to place the host buffer on";
  }
  const bool any_known =
      std::any_of(gpu_nodes.begin(), gpu_nodes.end(), [](const auto& node) { return node.has_value(); });
  if (!any_known) {
    return "the NUMA node of no GPU is known (hwloc and sysfs report none, as on many VMs): no node can be called "
           "remote";
  }
  return std::nullopt;
}

std::optional<std::string> mig_skip_reason(bool mig_enabled, const std::string& gpu) {
  if (!mig_enabled) return std::nullopt;
  return "MIG mode is on: CUDA sees one MIG slice at this address, whose copy engines are a fraction of the GPU's, "
         "so its copies would not measure the link; measure with MIG off (nvidia-smi -i " +
         gpu + " -mig 0, on an idle GPU)";
}

std::optional<std::string> pcie_traffic_skip_reason(std::uint64_t traffic_kbps) {
  if (traffic_kbps <= kBusyPcieTrafficKbps) return std::nullopt;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.2f", static_cast<double>(traffic_kbps) / 1e6);
  return "the GPU moved " + std::string(rate) +
         " GB/s over PCIe before the probes (NVML TX + RX; an idle GPU moves under 0.01 GB/s, the bound is " +
         std::to_string(kBusyPcieTrafficKbps / 1000) +
         " MB/s): another job shares its link, so its copies would prove nothing about it; run on a drained node "
         "(nvidia-smi lists the GPU's processes)";
}

}  // namespace pcieval
