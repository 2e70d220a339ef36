// How an MPI launch reaches the fleet code without `pcieval` linking libmpi.
// `pcieval` is built without MPI; under mpirun/srun it replaces itself with
// `pcieval-mpi` (the same main built with PCIEVAL_HAVE_MPI and mpi_fleet.cpp),
// which must sit in the same directory. Nothing here needs an MPI header.
#pragma once

#include <filesystem>
#include <string_view>

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

// The soname of the libmpi pcieval-mpi is linked against ("libmpi.so.40"),
// known when this was built; "" in a build without MPI or where the build
// could not tell it (app/CMakeLists.txt).
[[nodiscard]] std::string_view built_libmpi_soname();

// Whether an exec of the MPI build at `sibling` can start, checked before the
// exec: once execv has succeeded, a libmpi missing from the node is the
// dynamic loader's exit 127 and its message, not pcieval's. `sibling` must be
// a regular file this user may execute, and `libmpi_soname` (unless empty)
// must load: dlopen(RTLD_LAZY | RTLD_LOCAL) by the soname, which searches
// LD_LIBRARY_PATH, the loader cache and the system directories as the
// loader will, then, if that fails, in `libmpi_dir` (unless empty), the
// directory the build linked libmpi from and pcieval-mpi's RUNPATH. The
// library is unloaded again. The error names the path or the library, the
// reason (strerror or dlerror) and the fix, in one line: for a missing
// pcieval-mpi both the package to install and how to build it, the one that
// applies first (a `sibling` in /usr/bin is the packages').
[[nodiscard]] Status check_mpi_sibling(const std::filesystem::path& sibling, std::string_view libmpi_soname,
                                       const std::filesystem::path& libmpi_dir = {});

// Replaces this process with the MPI build beside /proc/self/exe, with the
// same argv and environment (execv, no shell), once check_mpi_sibling passed
// for it and the built libmpi. exec keeps the pid, so the launcher (mpirun's
// daemon, slurmstepd, a PMIx server) still tracks the rank. Returns only when
// that could not happen, with a message that names the path and the fix.
// Flushes std::cout and std::cerr first.
// REQUIRES: argv is main's, null-terminated.
[[nodiscard]] Error exec_mpi_sibling(char** argv);

}  // namespace pcieval::app
