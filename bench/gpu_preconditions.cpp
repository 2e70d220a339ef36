#include "bench/gpu_preconditions.hpp"

#include <algorithm>
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

}  // namespace pcieval
