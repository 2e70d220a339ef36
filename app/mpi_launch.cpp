#include "app/mpi_launch.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <system_error>

namespace pcieval::app {
namespace {

namespace fs = std::filesystem;

// Said with every failure: the two ways to a fleet that work from here.
constexpr const char* kFix =
    "build with Open MPI installed (libopenmpi-dev) so that pcieval-mpi is built beside pcieval, or run "
    "'pcieval fleet merge' on per-node results (check -o)";

}  // namespace

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

fs::path mpi_sibling_of(const fs::path& self) { return self.parent_path() / kMpiBinaryName; }

Error exec_mpi_sibling(char** argv) {
  // /proc/self/exe, not argv[0]: mpirun and srun may start pcieval through
  // PATH or a relative path, and a symlinked install resolves to the real
  // directory, where the build put pcieval-mpi.
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) {
    return make_error("launched by MPI, but /proc/self/exe cannot be read (" + error.message() +
                      ") to find pcieval-mpi; " + kFix);
  }
  const fs::path sibling = mpi_sibling_of(self);
  std::cout.flush();
  std::cerr.flush();
  ::execv(sibling.c_str(), argv);
  const int exec_errno = errno;  // execv returns only on failure
  return make_error("launched by MPI, but the MPI build " + sibling.string() + " cannot be started (" +
                    std::strerror(exec_errno) + "); " + kFix);
}

}  // namespace pcieval::app
