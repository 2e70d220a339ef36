// The NCCL all-reduce probes: every local GPU in one all-reduce, one process
// and one communicator per GPU, with nccl-tests' conventions (algbw = bytes /
// time, busbw = algbw x 2(n-1)/n, GB = 1e9). Two modes:
// - allreduce_nccl_host: peer-to-peer disabled (NCCL_P2P_DISABLE=1,
//   NCCL_NVLS_ENABLE=0, NCCL_SHM_DISABLE=0), so NCCL moves every byte
//   through host memory (its SHM transport) and every GPU's PCIe link carries
//   busbw in both directions at once. The validator judges it
//   (validate/collective_rules.hpp).
// - allreduce_nccl: the transport NCCL picks (NVLink, NVLS, P2P over PCIe):
//   reported as measured, never judged (--full only).
//
// NCCL reads NCCL_P2P_DISABLE once per process, at the first communicator it
// sets up, and keeps that answer for every later one (src/graph/paths.cc,
// ncclTopoUserP2pLevel). So the host-path probe is registered first, and a
// later allreduce_nccl in the same run goes through host memory too: it says
// so in a warning. The host-path probe refuses to run (an error, never a
// mislabelled number) when an earlier communicator of the process latched P2P
// on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/nccl_library.hpp"
#include "bench/probe.hpp"
#include "support/shared_library.hpp"

namespace pcieval {

struct NcclProbeOptions {
  // The deadline of every NCCL wait: communicator setup, one trial's
  // all-reduce, the check of its result. Far above any healthy all-reduce of
  // pcieval (1 GiB over 8 GPUs through host memory takes well under a
  // second), so only a hung communicator reaches it.
  double timeout_s = 60.0;
  // libnccl.so.2, or what PCIEVAL_NCCL_LIBRARY names.
  std::string library_name = library_from_environment(kNcclLibraryEnvironment, kNcclLibraryName);
};

// Sets, once per process and until it exits, every environment variable the
// NCCL probes need: NCCL's log capture (NCCL_DEBUG*, nccl_transport.hpp) and,
// when `host_path` (two or more GPUs, so allreduce_nccl_host will run), the
// host-path settings above. setenv is not safe while any other thread may
// read the environment (glibc's getenv takes no lock), and while the probes
// run the link sampler, NVML's worker and the progress ticker do: so app/
// calls this before it starts any thread, and no probe sets a variable
// itself. allreduce_nccl_host refuses to run (an error) when it was not
// called with `host_path`; allreduce_nccl then also runs through host memory,
// as NCCL latches the first setting anyway (see above).
void prepare_nccl_environment(bool host_path);

// Appends allreduce_nccl_host, then allreduce_nccl (see above for the order).
void add_nccl_probes(ProbeRegistry& registry, const NcclProbeOptions& options = {});

// nccl-tests' bus bandwidth factor of an all-reduce over `ranks`: 2(n-1)/n.
// REQUIRES: ranks >= 1.
[[nodiscard]] double allreduce_bus_factor(int ranks);

// The --full sweep: 8 KiB to 512 MiB by factors of 4, then 1 GiB.
[[nodiscard]] std::vector<std::uint64_t> allreduce_sweep_sizes();

}  // namespace pcieval
