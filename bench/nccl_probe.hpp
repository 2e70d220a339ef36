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
#include <functional>
#include <string>
#include <vector>

#include "bench/nccl_library.hpp"
#include "bench/probe.hpp"

namespace pcieval {

struct NcclProbeOptions {
  // The deadline of every NCCL wait: communicator setup, one trial's
  // all-reduce, the check of its result. Far above any healthy all-reduce of
  // pcieval (1 GiB over 8 GPUs through host memory takes well under a
  // second), so only a hung communicator reaches it.
  double timeout_s = 60.0;
  std::string library_name = std::string(kNcclLibraryName);
};

// Appends allreduce_nccl_host, then allreduce_nccl (see above for the order).
void add_nccl_probes(ProbeRegistry& registry, const NcclProbeOptions& options = {});

// nccl-tests' bus bandwidth factor of an all-reduce over `ranks`: 2(n-1)/n.
// REQUIRES: ranks >= 1.
[[nodiscard]] double allreduce_bus_factor(int ranks);

// The --full sweep: 8 KiB to 512 MiB by factors of 4, then 1 GiB.
[[nodiscard]] std::vector<std::uint64_t> allreduce_sweep_sizes();

// --- One process's part of an all-reduce across processes: the fleet
// all-reduce of an MPI run (app/mpi_fleet_allreduce.hpp), every GPU of every
// node in one communicator. The caller moves the unique id from the process
// of global rank 0 to the others and lines the processes up before each
// trial; NCCL itself connects them (its own sockets or InfiniBand, never MPI).

// The CUDA devices this process can give it: every one CUDA enumerates
// (CUDA_VISIBLE_DEVICES applies) less those retired earlier in the run. An
// error says why there are none: built without CUDA, NCCL not loadable, no
// usable device.
[[nodiscard]] Result<std::vector<int>> allreduce_part_ordinals(const NcclProbeOptions& options = {});

// A fresh unique id, made by the process that holds global rank 0.
[[nodiscard]] Result<NcclUniqueId> make_nccl_unique_id(const NcclProbeOptions& options = {});

struct AllReducePart {
  NcclUniqueId id{};
  int first_rank = 0;         // the global rank of ordinals[0]; the others follow
  int total_ranks = 0;        // every GPU of every process
  std::vector<int> ordinals;  // this process's CUDA devices
  std::uint64_t size_bytes = 0;
  int warmup_trials = 1;
  int trials = 5;
  // Called before every trial, warm-up ones too, on this thread (a barrier of
  // the processes, so they launch together); an error ends the part.
  std::function<Status()> before_trial;
};

struct AllReducePartResult {
  // Per timed trial, the seconds of this process's slowest rank, timed by
  // CUDA events around the all-reduce. The caller takes the slowest process.
  std::vector<double> trial_s;
  std::vector<std::string> warnings;  // the transport NCCL was left, as the probes say it
};

// Sets up this process's ranks, runs the trials with the transport NCCL
// picks (after allreduce_nccl_host in the same process: through host memory
// within the node, and a warning says so) and checks the last result on
// every local GPU against the exact sum over total_ranks.
[[nodiscard]] Result<AllReducePartResult> run_allreduce_part(const AllReducePart& part,
                                                             const NcclProbeOptions& options = {});

// Sets environment variables for its lifetime and restores each one's earlier
// value (or absence) when destroyed. setenv is not thread-safe against
// concurrent getenv: hold it only around NCCL's communicator setup, which is
// where NCCL reads its variables.
class ScopedEnvironment {
 public:
  ScopedEnvironment() = default;
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;
  ~ScopedEnvironment();
  void set(const std::string& name, const std::string& value);

 private:
  struct Saved {
    std::string name;
    bool was_set = false;
    std::string value;
  };
  std::vector<Saved> saved_;
};

}  // namespace pcieval
