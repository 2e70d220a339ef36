// One process's part of an all-reduce across processes: the fleet all-reduce
// of an MPI run (app/mpi_fleet_allreduce.hpp), every GPU of every node in one
// communicator. The caller moves the unique id from the process of global
// rank 0 to the others and lines the processes up before each trial; NCCL
// itself connects them (its own sockets or InfiniBand, never MPI).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/nccl_library.hpp"
#include "bench/nccl_probe.hpp"  // NcclProbeOptions
#include "model/result.hpp"

namespace pcieval {

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

}  // namespace pcieval
