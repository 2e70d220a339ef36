// How an MPI launch reaches the fleet code without `pcieval` linking libmpi.
// `pcieval` is built without MPI; under mpirun/srun it replaces itself with
// `pcieval-mpi` (the same main built with PCIEVAL_HAVE_MPI and mpi_fleet.cpp),
// which must sit in the same directory. Nothing here needs an MPI header.
#pragma once

#include <filesystem>

#include "model/result.hpp"

namespace pcieval::app {

// Whether an MPI launcher started this process: Open MPI's mpirun
// (OMPI_COMM_WORLD_SIZE), a PMIx server (PMIX_RANK: Open MPI 4+, srun
// --mpi=pmix) or a PMI-1/2 one (PMI_SIZE: srun --mpi=pmi2, MPICH's hydra).
// SLURM_* alone is not a launch: a batch script that runs a plain
// `pcieval check` has them too, and MPI_Init there would need a runtime the
// check does not. Reads the environment only.
[[nodiscard]] bool launched_by_mpi();

// The name of the MPI build, looked for beside the running executable.
inline constexpr const char* kMpiBinaryName = "pcieval-mpi";

// `kMpiBinaryName` in the directory of `self` (what /proc/self/exe names).
[[nodiscard]] std::filesystem::path mpi_sibling_of(const std::filesystem::path& self);

// Replaces this process with the MPI build beside /proc/self/exe, with the
// same argv and environment (execv, no shell). exec keeps the pid, so the
// launcher (mpirun's daemon, slurmstepd, a PMIx server) still tracks the
// rank. Returns only when that could not happen, with a message that names
// the path and the fix. Flushes std::cout and std::cerr first.
// REQUIRES: argv is main's, null-terminated.
[[nodiscard]] Error exec_mpi_sibling(char** argv);

}  // namespace pcieval::app
