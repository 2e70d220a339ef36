# Install rules, man pages and the Debian packages (cpack -G DEB, `make deb`).
#
# Two packages, so that a plain node never needs Open MPI:
#   pcieval      the pcieval binary, its man page, the JSON Schemas, the systemd
#                units, the Slurm health check and the examples (NHC, k8s Job);
#   pcieval-mpi  pcieval-mpi and its man page, only where the build found MPI.
# Both binaries land in one directory (bin/): `pcieval check` under mpirun
# execs pcieval-mpi from its own directory (app/mpi_launch.cpp).
#
# Destinations are relative to the prefix, so `cmake --install build --prefix
# DIR` puts the same tree under DIR; the packages use the prefix /usr. The
# paths contrib/ cites (ExecStart=/usr/bin/pcieval, /usr/libexec/pcieval/...)
# are the packages' paths; tests/package checks that they agree.
include(GNUInstallDirs)

# cpack (and `cmake --install`) would otherwise build target "all" first,
# the test suites included: tens of minutes on a small machine, and a build
# inside the tree while ctest runs tests/package. `make deb` builds what the
# packages hold (the binaries, the man pages) before it calls cpack.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(PCIEVAL_PACKAGE_PREFIX "/usr")
set(PCIEVAL_SCHEMA_DIR "${CMAKE_INSTALL_DATADIR}/pcieval/schema")
set(PCIEVAL_LIBEXEC_DIR "${CMAKE_INSTALL_LIBEXECDIR}/pcieval")
# systemd reads units from lib/systemd/system under /usr and /usr/local alike;
# not CMAKE_INSTALL_LIBDIR, which is multiarch (lib/x86_64-linux-gnu) on Debian.
set(PCIEVAL_UNITS_DIR "lib/systemd/system")
set(PCIEVAL_DOC_DIR "${CMAKE_INSTALL_DATADIR}/doc/pcieval")
set(PCIEVAL_MPI_DOC_DIR "${CMAKE_INSTALL_DATADIR}/doc/pcieval-mpi")
set(PCIEVAL_EXAMPLES_DIR "${PCIEVAL_DOC_DIR}/examples")

install(TARGETS pcieval RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT pcieval)
if(PCIEVAL_HAVE_MPI)
  install(TARGETS pcieval-mpi RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT mpi)
endif()

install(FILES "${PROJECT_SOURCE_DIR}/results_schema/pcieval-results.schema.json"
              "${PROJECT_SOURCE_DIR}/results_schema/pcieval-fleet.schema.json"
        DESTINATION "${PCIEVAL_SCHEMA_DIR}" COMPONENT pcieval)
install(FILES "${PROJECT_SOURCE_DIR}/contrib/systemd/pcieval-check.service"
              "${PROJECT_SOURCE_DIR}/contrib/systemd/pcieval-check.timer"
        DESTINATION "${PCIEVAL_UNITS_DIR}" COMPONENT pcieval)
# pcieval-check.sh is the service's ExecStart (contrib/systemd/).
install(PROGRAMS "${PROJECT_SOURCE_DIR}/contrib/slurm/pcieval-nhc.sh" "${PROJECT_SOURCE_DIR}/contrib/systemd/pcieval-check.sh"
        DESTINATION "${PCIEVAL_LIBEXEC_DIR}" COMPONENT pcieval)
# NHC is not packaged by Debian: a site's NHC reads /etc/nhc/scripts from its
# own install, so the check file is an example to copy there (docs/install.md).
install(FILES "${PROJECT_SOURCE_DIR}/contrib/slurm/pcieval.nhc" "${PROJECT_SOURCE_DIR}/contrib/k8s/pcieval-job.yaml"
        DESTINATION "${PCIEVAL_EXAMPLES_DIR}" COMPONENT pcieval)

# The guides the help and the man page cite (docs/verdicts.md for --profile,
# sim/README.md for --simulate), in the source tree's layout so that their
# links to each other hold; pcieval(1) names them here (packaging/manpage.py).
# The screenshots are left out: 0.7 MB for two pictures.
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${PCIEVAL_DOC_DIR}" COMPONENT pcieval)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${PCIEVAL_DOC_DIR}/docs" COMPONENT pcieval
        FILES_MATCHING PATTERN "*.md")
install(FILES "${PROJECT_SOURCE_DIR}/sim/README.md" DESTINATION "${PCIEVAL_DOC_DIR}/sim" COMPONENT pcieval)

# Man pages from the binary's own help (packaging/manpage.py), rebuilt with
# it, so that a flag added to the CLI is in the page of the same build.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(PCIEVAL_MAN_DIR "${CMAKE_BINARY_DIR}/man")
set(pcieval_man_pages "${PCIEVAL_MAN_DIR}/pcieval.1.gz")
add_custom_command(
  OUTPUT "${PCIEVAL_MAN_DIR}/pcieval.1.gz"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${PCIEVAL_MAN_DIR}"
  COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/packaging/manpage.py" --binary "$<TARGET_FILE:pcieval>"
          --version "${PROJECT_VERSION}" --out "${PCIEVAL_MAN_DIR}/pcieval.1.gz"
          --schema-dir "${PCIEVAL_PACKAGE_PREFIX}/${PCIEVAL_SCHEMA_DIR}"
          --units-dir "${PCIEVAL_PACKAGE_PREFIX}/${PCIEVAL_UNITS_DIR}"
          --libexec-dir "${PCIEVAL_PACKAGE_PREFIX}/${PCIEVAL_LIBEXEC_DIR}"
          --examples-dir "${PCIEVAL_PACKAGE_PREFIX}/${PCIEVAL_EXAMPLES_DIR}"
          --doc-dir "${PCIEVAL_PACKAGE_PREFIX}/${PCIEVAL_DOC_DIR}"
  DEPENDS pcieval "${PROJECT_SOURCE_DIR}/packaging/manpage.py"
  COMMENT "Generating pcieval(1) from pcieval --help"
  VERBATIM)
install(FILES "${PCIEVAL_MAN_DIR}/pcieval.1.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT pcieval)
if(PCIEVAL_HAVE_MPI)
  list(APPEND pcieval_man_pages "${PCIEVAL_MAN_DIR}/pcieval-mpi.1.gz")
  add_custom_command(
    OUTPUT "${PCIEVAL_MAN_DIR}/pcieval-mpi.1.gz"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${PCIEVAL_MAN_DIR}"
    COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/packaging/manpage.py" --mpi --version "${PROJECT_VERSION}"
            --out "${PCIEVAL_MAN_DIR}/pcieval-mpi.1.gz"
    DEPENDS "${PROJECT_SOURCE_DIR}/packaging/manpage.py"
    COMMENT "Generating pcieval-mpi(1)"
    VERBATIM)
  install(FILES "${PCIEVAL_MAN_DIR}/pcieval-mpi.1.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT mpi)
endif()
add_custom_target(pcieval_man ALL DEPENDS ${pcieval_man_pages})

# --- Debian packages ---------------------------------------------------------
# The site's values where pcieval is rebuilt and shipped by someone else.
set(PCIEVAL_PACKAGE_MAINTAINER "pcieval maintainers <maintainers@users.noreply.a-seed-fdd63850.example>"
    CACHE STRING "Maintainer: field of the Debian packages")
set(PCIEVAL_PACKAGE_HOMEPAGE "https://pcieval.invalid/" CACHE STRING "Homepage: field of the Debian packages")
# The Debian revision: bump it to ship a rebuild of the same PROJECT_VERSION.
set(PCIEVAL_PACKAGE_RELEASE "1" CACHE STRING "Debian revision of the packages (VERSION-RELEASE)")
set(pcieval_deb_version "${PROJECT_VERSION}-${PCIEVAL_PACKAGE_RELEASE}")

# Each package's /usr/share/doc/PACKAGE: copyright and changelog.Debian.gz,
# which Debian policy asks of every package.
set(pcieval_deb_docs "")
foreach(package pcieval pcieval-mpi)
  if(package STREQUAL "pcieval-mpi" AND NOT PCIEVAL_HAVE_MPI)
    continue()
  endif()
  set(component pcieval)
  set(doc_dir "${PCIEVAL_DOC_DIR}")
  if(package STREQUAL "pcieval-mpi")
    set(component mpi)
    set(doc_dir "${PCIEVAL_MPI_DOC_DIR}")
  endif()
  set(changelog "${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian.gz")
  add_custom_command(
    OUTPUT "${changelog}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/packaging/${package}"
    COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/packaging/changelog.py" --package "${package}"
            --version "${pcieval_deb_version}" --maintainer "${PCIEVAL_PACKAGE_MAINTAINER}" --out "${changelog}"
    DEPENDS "${PROJECT_SOURCE_DIR}/packaging/changelog.py"
    VERBATIM)
  list(APPEND pcieval_deb_docs "${changelog}")
  install(FILES "${changelog}" "${PROJECT_SOURCE_DIR}/packaging/copyright" DESTINATION "${doc_dir}"
          COMPONENT ${component})
  # The lintian tags argued away, each with its reason, in packaging/lintian/.
  install(FILES "${PROJECT_SOURCE_DIR}/packaging/lintian/${package}" DESTINATION "${CMAKE_INSTALL_DATADIR}/lintian/overrides"
          COMPONENT ${component})
endforeach()
add_custom_target(pcieval_deb_docs ALL DEPENDS ${pcieval_deb_docs})

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "pcieval")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${PCIEVAL_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX "${PCIEVAL_PACKAGE_PREFIX}")
# Shipped binaries carry no debug info (lintian: unstripped-binary-or-object);
# build/pcieval keeps it.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL pcieval)
if(PCIEVAL_HAVE_MPI)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_RELEASE "${PCIEVAL_PACKAGE_RELEASE}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PCIEVAL_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${PCIEVAL_PACKAGE_HOMEPAGE}")
set(CPACK_DEBIAN_PACKAGE_SECTION "admin")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# Depends: from the libraries the binaries link (dpkg-shlibdeps, dpkg-dev).
# CUDA, NVML and NCCL are dlopen'ed at run time, so they never appear: the
# package installs on a node without a GPU driver, which then still judges
# every PCIe link of the host.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_DEBIAN_PCIEVAL_PACKAGE_NAME "pcieval")
# The maintainer scripts of the systemd units, by hand as dh_installsystemd
# would write them (packaging/debian/postinst): enable nothing on install;
# on removal stop and disable the timer, so that no enabled timer is left
# pointing at a deleted unit; purge deletes what the units created. Only
# pcieval's: the global CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA would give
# pcieval-mpi the same scripts. STRICT_PERMISSION: 0755, as policy asks.
set(CPACK_DEBIAN_PCIEVAL_PACKAGE_CONTROL_EXTRA "${PROJECT_SOURCE_DIR}/packaging/debian/postinst"
    "${PROJECT_SOURCE_DIR}/packaging/debian/prerm" "${PROJECT_SOURCE_DIR}/packaging/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PCIEVAL_PACKAGE_SUGGESTS "prometheus-node-exporter")
if(PCIEVAL_HAVE_MPI)
  set(CPACK_DEBIAN_PCIEVAL_PACKAGE_SUGGESTS "pcieval-mpi, prometheus-node-exporter")
endif()
set(CPACK_COMPONENT_PCIEVAL_DESCRIPTION
    "PCIe link and bandwidth validation for GPU nodes
pcieval finds GPU and host PCIe links that trained below what their slots
can do: it reads every hop from each GPU up to its root port under load,
measures host-to-device and device-to-host copy bandwidth, and judges the
evidence, with exit codes meant for burn-in scripts, Slurm health checks
and CI gates (0 pass, 1 fail, 2 usage, 3 inconclusive).

CUDA, NVML and NCCL are loaded at run time where the NVIDIA driver is
installed; without them pcieval still reads and judges every PCIe link of
the host. Includes systemd units for a nightly check, a Slurm health check
and JSON Schemas of the results documents.")

set(CPACK_DEBIAN_MPI_PACKAGE_NAME "pcieval-mpi")
# The same build of pcieval: pcieval execs pcieval-mpi with its own argv.
set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "pcieval (= ${pcieval_deb_version})")
# mpirun comes from openmpi-bin; a Slurm cluster launches with srun instead.
set(CPACK_DEBIAN_MPI_PACKAGE_SUGGESTS "openmpi-bin")
set(CPACK_COMPONENT_MPI_DESCRIPTION
    "PCIe link and bandwidth validation for GPU nodes - MPI fleet runs
pcieval-mpi is the build of pcieval linked with MPI. Under mpirun or srun,
pcieval check replaces itself with pcieval-mpi, which runs the check on
every node as one fleet: rank 0 collects every node's results into one
fleet document, and an NCCL all-reduce over every GPU of every node
follows. A node that never runs fleet checks needs only pcieval.")

include(CPack)
