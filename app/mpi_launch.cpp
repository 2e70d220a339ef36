#include "app/mpi_launch.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

namespace pcieval::app {
namespace {

namespace fs = std::filesystem;

// Where the packages put both binaries (cmake/PcievalPackaging.cmake: prefix
// /usr). A pcieval anywhere else was built or installed from source.
constexpr const char* kPackageBinDir = "/usr/bin";

// Said with every failure: the ways to a fleet that work from here. The
// pcieval package never holds pcieval-mpi (it would pull Open MPI onto every
// node), so a package user installs the second package; a source build
// builds it. Which one applies comes first, the other after it, since a
// binary copied out of /usr/bin would otherwise get the wrong advice only.
std::string sibling_fix(const fs::path& sibling) {
  // A site may serve the packages from a repository or copy the .deb files
  // around (docs/install.md): both spellings.
  const std::string install =
      "install the pcieval-mpi package of the same version (apt-get install pcieval-mpi, or apt install "
      "./pcieval-mpi_*.deb made beside this pcieval's package)";
  const std::string build =
      "build with Open MPI installed (libopenmpi-dev) so that pcieval-mpi is built beside pcieval (docs/fleet.md)";
  const std::string merge = "or run 'pcieval fleet merge' on per-node results (check -o)";
  if (sibling.empty()) return "installed from the package: " + install + "; built from source: " + build + "; " + merge;
  if (sibling.parent_path() == kPackageBinDir) {
    return "this pcieval is the package's (" + std::string(kPackageBinDir) + "): " + install +
           "; built from source: " + build + "; " + merge;
  }
  return "this pcieval was built from source (not in " + std::string(kPackageBinDir) + "): " + build +
         "; installed from the package: " + install + "; " + merge;
}

// When pcieval-mpi is there but its MPI runtime is not: the build is fine,
// the node lacks the library.
constexpr const char* kRuntimeFix =
    "install the MPI runtime pcieval-mpi was built against on this node (Open MPI: libopenmpi3 on Debian and "
    "Ubuntu, openmpi on RHEL and its rebuilds), or run 'pcieval fleet merge' on per-node results (check -o)";

// Set by app/CMakeLists.txt from the libmpi the MPI build links.
#ifdef PCIEVAL_LIBMPI_SONAME
constexpr const char* kLibmpiSoname = PCIEVAL_LIBMPI_SONAME;
constexpr const char* kLibmpiDir = PCIEVAL_LIBMPI_DIR;
#else
constexpr const char* kLibmpiSoname = "";
constexpr const char* kLibmpiDir = "";
#endif

struct DlClose {
  void operator()(void* handle) const noexcept { ::dlclose(handle); }
};
using LibraryHandle = std::unique_ptr<void, DlClose>;

// The library loaded by `name` (a soname or a path), or dlerror's text.
Result<LibraryHandle> load_library(const std::string& name) {
  ::dlerror();  // clears an earlier message
  LibraryHandle handle(::dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL));
  if (!handle) {
    const char* message = ::dlerror();
    return make_error(message != nullptr ? message : name + ": cannot be loaded");
  }
  return handle;
}

}  // namespace

std::string_view built_libmpi_soname() { return kLibmpiSoname; }

Status check_mpi_sibling(const fs::path& sibling, std::string_view libmpi_soname, const fs::path& libmpi_dir) {
  const std::string what = "launched by MPI, but the MPI build " + sibling.string();
  struct stat status {};
  if (::stat(sibling.c_str(), &status) != 0) {
    const std::string reason = std::strerror(errno);  // before anything else may set errno
    return make_error(what + " cannot be started (" + reason + "); " + sibling_fix(sibling));
  }
  if (!S_ISREG(status.st_mode)) {
    return make_error(what + " cannot be started (not a regular file); " + sibling_fix(sibling));
  }
  if (::access(sibling.c_str(), X_OK) != 0) {
    const std::string reason = std::strerror(errno);
    return make_error(what + " cannot be started (" + reason +
                      ": not executable by this user); make it executable (chmod +x), or " + sibling_fix(sibling));
  }
  if (libmpi_soname.empty()) return ok_status();

  const std::string soname(libmpi_soname);
  Result<LibraryHandle> loaded = load_library(soname);
  if (!loaded && !libmpi_dir.empty()) {
    // pcieval-mpi's RUNPATH finds libmpi where the build did (an MPI module
    // under /opt): so may this check.
    std::error_code ignored;
    const fs::path beside = libmpi_dir / soname;
    if (fs::exists(beside, ignored)) {
      if (Result<LibraryHandle> from_dir = load_library(beside.string())) loaded = std::move(from_dir);
    }
  }
  if (!loaded) {
    return make_error(what + " needs " + soname + ", which cannot be loaded on this node (" + loaded.error().message +
                      "); " + kRuntimeFix);
  }
  return ok_status();
}

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
                      ") to find pcieval-mpi; " + sibling_fix({}));
  }
  const fs::path sibling = mpi_sibling_of(self);
  if (Status ready = check_mpi_sibling(sibling, kLibmpiSoname, kLibmpiDir); !ready) return ready.error();
  std::cout.flush();
  std::cerr.flush();
  ::execv(sibling.c_str(), argv);
  const int exec_errno = errno;  // execv returns only on failure
  return make_error("launched by MPI, but the MPI build " + sibling.string() + " cannot be started (" +
                    std::strerror(exec_errno) + "); " + sibling_fix(sibling));
}

}  // namespace pcieval::app
