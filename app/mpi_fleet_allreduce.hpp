// The fleet all-reduce of an MPI run (fleet/fleet_allreduce.hpp): after the
// nodes' own checks, one NCCL all-reduce over every GPU of every node. MPI
// carries only the bookkeeping: each node's offer of GPUs, the plan with the
// NCCL unique id and each node's first rank, a barrier before each trial so
// the nodes launch together, and each node's trial times back to node 0.
// NCCL moves the data over its own transports. Compiled into pcieval-mpi and
// its test only.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/nccl_part.hpp"
#include "fleet/fleet_allreduce.hpp"
#include "model/result.hpp"

namespace pcieval::app {

// What the fleet all-reduce calls on each node. nccl_hooks() gives bench/'s
// (CUDA and NCCL); the test of the exchange gives its own, with no GPU.
struct FleetAllReduceHooks {
  std::function<Result<std::vector<int>>()> local_gpus;  // this node's CUDA devices, or why none
  std::function<Result<NcclUniqueId>()> unique_id;       // called on node 0 only
  std::function<Result<AllReducePartResult>(const AllReducePart&)> run_part;
};
[[nodiscard]] FleetAllReduceHooks nccl_hooks();

struct FleetAllReduceSettings {
  std::uint64_t size_bytes = std::uint64_t{256} << 20;
  int warmup_trials = 1;
  int trials = 5;
  // Node 0's wait for the other nodes' offers, and for their results after
  // its own share.
  double timeout_s = 300;
  // Every node's wait at a trial's barrier: as long as NCCL's own waits
  // (bench/nccl_probe.hpp), since a peer stuck there is what it waits for.
  double barrier_timeout_s = 60;
};

struct FleetAllReduceOutcome {
  FleetAllReduce entry;  // node 0 only
  // A request to another node is still pending (a node that never answered
  // or never reached a barrier): the job must end with MPI_Abort, since
  // MPI_Finalize would wait for it for ever.
  bool abandoned = false;
};

// Collective over `leaders` (one rank per node; node 0 is its rank 0, the
// fleet's rank 0). Every node calls it after sending its results, node 0
// after collecting them: `hosts` (node i's name) and `all_answered` are read
// on node 0 only. A node that did not answer means no all-reduce: its peers
// would wait for it in the collective.
[[nodiscard]] FleetAllReduceOutcome run_fleet_allreduce(MPI_Comm leaders, const std::vector<std::string>& hosts,
                                                        bool all_answered, const FleetAllReduceSettings& settings,
                                                        const FleetAllReduceHooks& hooks);

}  // namespace pcieval::app
