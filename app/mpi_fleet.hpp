// `mpirun -np N pcieval check ...` and `srun pcieval check ...`: every node
// runs its own check and rank 0 tells the fleet. Compiled only into
// pcieval-mpi, built where the build found MPI (PCIEVAL_HAVE_MPI); `pcieval`
// execs it under a launcher (mpi_launch.hpp). This header needs no MPI header.
#pragma once

#include <string>

#include "app/commands.hpp"
#include "app/mpi_launch.hpp"  // launched_by_mpi()

namespace pcieval::app {

// "{rank}" in `text` replaced by `node` (every occurrence).
[[nodiscard]] std::string expand_rank(std::string text, int node);

// The fleet run. One rank per node (MPI_Comm_split_type SHARED; every rank
// its own node with --fleet-one-node-per-rank) runs `check` quietly with
// "{rank}" in --sysfs-root, --topology-xml and -o replaced by its node's
// index, and sends its exit code and results document to rank 0; the other
// ranks of a node wait. Rank 0 waits at most fleet.timeout_s after its own
// check; a node that sent nothing by then is inconclusive ("no results
// within S s"), and one whose check wrote no document (its check ended in a
// usage error) is a node with exit code 2. Rank 0 prints the fleet table
// unless -q and writes --fleet-output. Every rank returns the fleet's exit
// code, so mpirun's and srun's status is the fleet's; when a rank is missing
// rank 0 ends the job with MPI_Abort(fleet's code) instead, because
// MPI_Finalize would wait for the missing rank for ever. Between the gather
// and the fleet table, every GPU of every node runs one NCCL all-reduce
// (mpi_fleet_allreduce.hpp) unless the flags say why not; a failed one ends
// the job with MPI_Abort too.
[[nodiscard]] int run_fleet_check(const CheckOptions& check, const FleetCheckOptions& fleet);

}  // namespace pcieval::app
