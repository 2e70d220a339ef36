// `mpirun -np N pcieval check ...` and `srun pcieval check ...`: every node
// runs its own check and rank 0 tells the fleet. Compiled only when the build
// found MPI (PCIEVAL_HAVE_MPI); this header itself needs no MPI header.
#pragma once

#include <string>

#include "app/commands.hpp"

namespace pcieval::app {

// Whether an MPI launcher started this process: Open MPI's mpirun
// (OMPI_COMM_WORLD_SIZE), a PMIx server (PMIX_RANK: Open MPI 4+, srun
// --mpi=pmix) or a PMI-1/2 one (PMI_SIZE: srun --mpi=pmi2, MPICH's hydra).
// SLURM_* alone is not a launch: a batch script that runs a plain
// `pcieval check` has them too, and MPI_Init there would need a runtime the
// check does not. Only then is MPI_Init called, so a plain check never needs
// an MPI runtime to run (the binary still loads libmpi, being linked to it).
[[nodiscard]] bool launched_by_mpi();

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
// MPI_Finalize would wait for the missing rank for ever.
[[nodiscard]] int run_fleet_check(const CheckOptions& check, const FleetCheckOptions& fleet);

}  // namespace pcieval::app
