#!/usr/bin/env bash
# Installs the Debian packages pcieval needs to build and test, only those that
# are missing, so `make run` and `make test` work on a fresh machine. Uses sudo
# when not root. CUDA is not installed here: it is optional and comes with the
# GPU node's image (/usr/local/cuda).
set -euo pipefail

packages=(
  g++ make cmake pkg-config python3
  ninja-build           # the build tool `make` configures CMake for (Makefile)
  libhwloc-dev          # topology: GPU -> bridges -> root port, NUMA
  nlohmann-json3-dev    # results document
  libsimdjson-dev       # fleet merge: reads thousands of node documents at GB/s
  libcli11-dev          # command line
  libsqlite3-dev        # history: the run history database
  libtinyxml2-dev       # ingest: nvidia-smi -q -x XML
  libopenmpi-dev openmpi-bin  # fleet runs under mpirun/srun; tests/mpi runs mpirun -np 4
  libgtest-dev libgmock-dev libvalijson-dev  # tests, schema validation
  libbenchmark-dev      # Google Benchmark suites in bench/perf/micro
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(hwloc-nox)  # lstopo-no-graphics, the reference in bench/
  packages+=(time)       # GNU time -v: peak RSS in bench/perf/fleet_merge_scale.sh
fi
# make deb: dpkg-shlibdeps (dpkg-dev) computes the packages' Depends from the
# libraries the binaries link.
if [[ "${1:-}" == "--deb" || "${1:-}" == "--test" ]]; then
  packages+=(dpkg-dev)
fi
if [[ "${1:-}" == "--test" ]]; then
  # tests/package lints the packages with lintian (skipped when it is absent):
  # 124 packages, mostly Perl modules: 16 MB to download, 25 MB installed.
  packages+=(lintian)
  # The real consumer of --prom: tests/report/node_exporter_check.sh runs it on
  # 127.0.0.1 (the test skips when it is absent). Only for tests, never for
  # `make run`: on a host with systemd the package also enables and starts its
  # own service on port 9100, which a GPU node should not get by surprise.
  packages+=(prometheus-node-exporter)
  # The real consumer of --html: tests/report/chromium_check.py loads reports
  # in headless Chromium (the test skips when it is absent).
  packages+=(chromium)
  # tests/contrib: shellcheck on contrib/'s scripts; PyYAML reads the
  # Kubernetes Job. (systemd-analyze, from systemd, is used when present.)
  packages+=(shellcheck python3-yaml)
  # tests/fuzz: the parsers' libFuzzer harnesses need clang and its runtime
  # (libFuzzer, ASan, UBSan).
  packages+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "pcieval: installing missing packages: ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "pcieval: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
