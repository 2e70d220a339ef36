// Why a GPU probe cannot run on this machine, decided from plain facts so the
// rules are tested without a GPU (issue 17): each function returns nullopt
// when the probe may run, or the one-line reason it is skipped with. A
// skipped probe is recorded with its reason; with GPUs in the evidence the
// run is then inconclusive, never a pass and never a FAIL of the GPU.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace pcieval {

// Whether the value of CUDA_LAUNCH_BLOCKING (nullptr: unset) makes every
// kernel launch wait for the kernel to finish. CUDA reads "1" as on.
[[nodiscard]] bool launch_blocking_requested(const char* value);

// A latched probe cannot run with blocking launches: the launch of the latch
// kernel itself would not return until the latch gives up (the host cannot
// release it while it waits in the launch), so every trial would time out.
[[nodiscard]] std::optional<std::string> launch_blocking_skip_reason(bool launch_blocking);

// Confidential-computing mode (NVML's system state, nullopt when unknown):
// the GPU cannot register host memory nor map it into its address space
// (every transfer goes through encrypted bounce buffers), so the probes that
// pin a host buffer with cudaHostRegister or hold a stream with the latch
// (mapped memory) cannot run. Unknown is not on: the probes run and a
// refusal is then their error.
[[nodiscard]] std::optional<std::string> confidential_computing_skip_reason(std::optional<bool> confidential_computing);

// remote_numa_ce needs a second NUMA node and a GPU whose own node is known
// (on VMs hwloc and sysfs often report none): without its node nothing can be
// called remote. `gpu_nodes`: each GPU's node, nullopt where unknown.
[[nodiscard]] std::optional<std::string> remote_numa_skip_reason(std::size_t machine_nodes,
                                                                 std::span<const std::optional<int>> gpu_nodes);

}  // namespace pcieval
