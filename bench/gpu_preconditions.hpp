// Why a GPU probe cannot run on this machine, decided from plain facts so the
// rules are tested without a GPU (issue 17): each function returns nullopt
// when the probe may run, or the one-line reason it is skipped with. A
// skipped probe is recorded with its reason; with GPUs in the evidence the
// run is then inconclusive, never a pass and never a FAIL of the GPU.
#pragma once

#include <cstddef>
#include <cstdint>
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

// MIG mode on a GPU (NVML): CUDA sees one MIG slice at the GPU's address,
// whose copy engines are a fraction of the GPU's, so copies through it would
// read as a downgraded link. The reason names the fix for `gpu` (a BDF).
[[nodiscard]] std::optional<std::string> mig_skip_reason(bool mig_enabled, const std::string& gpu);

// PCIe traffic an idle GPU does not make: at most its driver's chatter (an
// idle H100 shows about 560 KB/s each way) and far below a copy. Over this,
// read before the probes, another job shares the GPU's link, whatever its
// SM utilisation says (a tenant that only copies runs no kernel): 500 MB/s,
// 2% of a Gen4 x16 link, more than can pass unseen in its copy rate.
inline constexpr std::uint64_t kBusyPcieTrafficKbps = 500'000;

// The GPU moved `traffic_kbps` (NVML's TX + RX, KB/s over 20 ms, the most of
// a few reads before the probes): its copies would share the link with
// another job, so they prove nothing about it.
[[nodiscard]] std::optional<std::string> pcie_traffic_skip_reason(std::uint64_t traffic_kbps);

// remote_numa_ce needs a second NUMA node and a GPU whose own node is known
// (on VMs hwloc and sysfs often report none): without its node nothing can be
// called remote. `gpu_nodes`: each GPU's node, nullopt where unknown.
[[nodiscard]] std::optional<std::string> remote_numa_skip_reason(std::size_t machine_nodes,
                                                                 std::span<const std::optional<int>> gpu_nodes);

}  // namespace pcieval
