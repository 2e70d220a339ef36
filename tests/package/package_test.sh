#!/usr/bin/env bash
# The Debian packages end to end, as an operator gets them: cpack builds them
# from this build folder into a scratch folder; their control fields must name
# the libraries the binaries link (dpkg-shlibdeps) and never CUDA, NVML, NCCL
# (dlopen'ed) nor, for pcieval, MPI; dpkg-deb -x unpacks them into a scratch
# root, and the binary is run from there on fixture machines and under
# mpirun; every file lands where cmake/PcievalPackaging.cmake says, and the
# paths the packaged contrib files cite exist in the unpacked root; the
# maintainer scripts enable nothing and clean up on remove. lintian
# judges both packages when it is installed (scripts/install-deps.sh --test).
# Skipped (77) without dpkg-deb.
#   package_test.sh CPACK BUILD_DIR FIXTURES_DIR SOURCE_DIR DEB_VERSION HAVE_MPI(0|1)
set -uo pipefail
cpack=$1
build_dir=$2
fixtures=$3
source_dir=$4
deb_version=$5
have_mpi=$6

command -v dpkg-deb >/dev/null || { echo "dpkg-deb not installed (dpkg): packages not checked"; exit 77; }
command -v dpkg-shlibdeps >/dev/null || { echo "dpkg-shlibdeps not installed (dpkg-dev): skipped"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pcieval-package-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

if ! "$cpack" --config "$build_dir/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1; then
  echo "cpack failed:" >&2
  cat "$work/cpack.log" >&2
  exit 1
fi
arch=$(dpkg --print-architecture)
deb="$work/out/pcieval_${deb_version}_${arch}.deb"
mpi_deb="$work/out/pcieval-mpi_${deb_version}_${arch}.deb"
[[ -f "$deb" ]] || { echo "FAIL: no $deb; cpack made: $(find "$work/out" -maxdepth 1 -name '*.deb' -printf '%f ')" >&2; exit 1; }
packages=("$deb")
if [[ $have_mpi == 1 ]]; then
  [[ -f "$mpi_deb" ]] || fail "MPI build but no $(basename "$mpi_deb")"
  packages+=("$mpi_deb")
elif [[ -e "$mpi_deb" ]]; then
  fail "a build without MPI made $(basename "$mpi_deb")"
fi

field() { dpkg-deb -f "$1" "$2"; }

# --- control fields ---
for package in "${packages[@]}"; do
  echo "== $(basename "$package")"
  dpkg-deb -f "$package" Package Version Architecture Section Depends Suggests Maintainer Homepage
  [[ "$(field "$package" Version)" == "$deb_version" ]] || fail "$package: Version $(field "$package" Version)"
  for name in Maintainer Homepage Section Description; do
    [[ -n "$(field "$package" "$name")" ]] || fail "$(basename "$package"): no $name field"
  done
  # Run-time libraries only: the NVIDIA stack is dlopen'ed where it exists.
  if grep -Eiq 'libcuda|libnvidia|nvidia-ml|libnccl|cudart' <<<"$(field "$package" Depends)"; then
    fail "$(basename "$package") depends on the NVIDIA stack: $(field "$package" Depends)"
  fi
done
depends=$(field "$deb" Depends)
[[ "$depends" == *libhwloc* ]] || fail "pcieval's Depends lacks libhwloc: $depends"
[[ "$depends" =~ (^|[ ,])libc6 ]] || fail "pcieval's Depends lacks libc6 (shlibdeps did not run?): $depends"
if grep -Eiq 'libmpi|openmpi|mpich' <<<"$depends"; then fail "pcieval depends on MPI: $depends"; fi
[[ "$(field "$deb" Package)" == pcieval ]] || fail "package name $(field "$deb" Package)"
[[ "$(field "$deb" Suggests)" == *prometheus-node-exporter* ]] || fail "pcieval does not suggest node_exporter"
if [[ $have_mpi == 1 ]]; then
  mpi_depends=$(field "$mpi_deb" Depends)
  [[ "$mpi_depends" == *"pcieval (= $deb_version)"* ]] || fail "pcieval-mpi does not depend on pcieval $deb_version: $mpi_depends"
  [[ "$mpi_depends" =~ libopenmpi|libmpich ]] || fail "pcieval-mpi's Depends lacks the MPI library: $mpi_depends"
  [[ "$(field "$deb" Suggests)" == *pcieval-mpi* ]] || fail "pcieval does not suggest pcieval-mpi"
fi

# --- files where the install rules put them ---
root="$work/root"
for package in "${packages[@]}"; do dpkg-deb -x "$package" "$root" || fail "dpkg-deb -x $package"; done
expect_file() {
  [[ -f "$root$1" ]] || fail "no $1 in the packages"
}
expect_file /usr/bin/pcieval
[[ -x "$root/usr/bin/pcieval" ]] || fail "/usr/bin/pcieval is not executable"
expect_file /usr/share/man/man1/pcieval.1.gz
for schema in pcieval-results.schema.json pcieval-fleet.schema.json; do
  expect_file "/usr/share/pcieval/schema/$schema"
  cmp -s "$root/usr/share/pcieval/schema/$schema" "$source_dir/results_schema/$schema" ||
    fail "packaged $schema differs from results_schema/"
done
expect_file /usr/lib/systemd/system/pcieval-check.service
expect_file /usr/lib/systemd/system/pcieval-check.timer
for script in pcieval-nhc.sh pcieval-check.sh; do
  expect_file "/usr/libexec/pcieval/$script"
  [[ -x "$root/usr/libexec/pcieval/$script" ]] || fail "$script is not executable"
done
expect_file /usr/share/doc/pcieval/examples/pcieval.nhc
expect_file /usr/share/doc/pcieval/examples/pcieval-job.yaml
expect_file /usr/share/doc/pcieval/copyright
expect_file /usr/share/doc/pcieval/changelog.Debian.gz
if [[ $have_mpi == 1 ]]; then
  expect_file /usr/bin/pcieval-mpi
  expect_file /usr/share/man/man1/pcieval-mpi.1.gz
  expect_file /usr/share/doc/pcieval-mpi/copyright
  [[ "$(dpkg-deb -c "$deb")" != *pcieval-mpi* ]] || fail "pcieval holds a pcieval-mpi file: $(dpkg-deb -c "$deb" | grep pcieval-mpi)"
fi
# Shipped stripped (CPACK_STRIP_FILES): no symbol table, no debug info.
readelf -S "$root/usr/bin/pcieval" | grep -Eq '\.(symtab|debug_info)' && fail "/usr/bin/pcieval is not stripped"

# The paths the packaged files cite are files of the packages.
# pcieval(1): every absolute path it names (FILES, the guides the help cites).
while read -r cited; do
  [[ -e "$root$cited" ]] || fail "pcieval(1) names $cited, which the packages do not install"
done < <(zcat "$root/usr/share/man/man1/pcieval.1.gz" | sed 's/\\-/-/g' | grep -oE '/usr/[A-Za-z0-9_./-]*[A-Za-z0-9_]' | sort -u)
expect_file /usr/share/doc/pcieval/docs/verdicts.md
expect_file /usr/share/doc/pcieval/sim/README.md
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$root/usr/lib/systemd/system/pcieval-check.service")
[[ -n "$exec_start" && -x "$root$exec_start" ]] || fail "the unit's ExecStart '$exec_start' is not in the package"
# shellcheck disable=SC2016  # the literal ${PCIEVAL_NHC_SCRIPT:-...} of the file
nhc_script=$(sed -n 's/^PCIEVAL_NHC_SCRIPT="\${PCIEVAL_NHC_SCRIPT:-\(.*\)}"$/\1/p' "$root/usr/share/doc/pcieval/examples/pcieval.nhc")
[[ -n "$nhc_script" && -x "$root$nhc_script" ]] || fail "pcieval.nhc runs '$nhc_script', not in the package"
job_command=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["spec"]["template"]["spec"]["containers"][0]["command"][0])' \
  "$root/usr/share/doc/pcieval/examples/pcieval-job.yaml" 2>/dev/null)
if [[ -n "$job_command" ]]; then
  [[ -x "$root$job_command" ]] || fail "the k8s Job runs '$job_command', not in the package"
else
  echo "PyYAML missing: the k8s Job's command not checked"
fi

# --- maintainer scripts: the units' enablement follows the package ---
# The scripts as the package holds them, through install, upgrade, remove
# and purge with systemctl and deb-systemd-* stubbed (maintainer_scripts_test.sh).
dpkg-deb -e "$deb" "$work/control" || fail "dpkg-deb -e $deb"
bash "$(dirname "${BASH_SOURCE[0]}")/maintainer_scripts_test.sh" "$work/control" ||
  fail "pcieval's maintainer scripts (above)"
if [[ $have_mpi == 1 ]]; then
  dpkg-deb -e "$mpi_deb" "$work/mpi-control" || fail "dpkg-deb -e $mpi_deb"
  for script in postinst prerm postrm; do
    [[ ! -e "$work/mpi-control/$script" ]] || fail "pcieval-mpi has a $script: it has no units"
  done
fi

# --- the unpacked binary runs ---
pcieval="$root/usr/bin/pcieval"
version=$("$pcieval" --version 2>&1)
[[ "$(head -n 1 <<<"$version")" == "pcieval ${deb_version%-*}" ]] || fail "--version printed '$version'"
# One package for every driver: the CUDA driver is loaded at run time, no
# CUDA runtime is linked (issue 26).
if readelf -d "$pcieval" | grep -E 'NEEDED.*(libcuda|libcudart)'; then fail "pcieval links a CUDA library"; fi
if ! ldconfig -p | grep -q 'libcuda\.so\.1'; then
  [[ "$version" == *"CUDA driver: no NVIDIA driver: libcuda.so.1 cannot be loaded"* ]] ||
    fail "--version does not say why there is no CUDA driver: '$version'"
fi
# check_machine EXPECTED_EXIT MACHINE: as DESIGN.md's exit codes say for it.
check_machine() {
  "$pcieval" check --sysfs-root "$fixtures/$2/sys" --topology-xml "$fixtures/$2/topology.xml" -q \
    -o "$work/$2.json" >"$work/out.txt" 2>&1
  local got=$?
  [[ $got -eq $1 ]] || fail "packaged pcieval check on $2: exit $got, want $1: $(cat "$work/out.txt")"
  [[ -s "$work/$2.json" ]] || fail "packaged pcieval check on $2 wrote no results"
}
check_machine 0 hgx_a100_8gpu_gen4
check_machine 1 hgx_a100_8gpu_gpu_x8
check_machine 3 esc8000a_e12_idle_gen1

# Under mpirun the packaged pcieval finds the packaged pcieval-mpi beside it.
if [[ $have_mpi == 1 ]] && command -v mpirun >/dev/null; then
  mkdir -p "$work/fleet"
  ln -s "$fixtures/hgx_a100_8gpu_gen4" "$work/fleet/node0"
  ln -s "$fixtures/hgx_a100_8gpu_gpu_x8" "$work/fleet/node1"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe -np 2 \
    "$pcieval" check --fleet-one-node-per-rank -q --sysfs-root "$work/fleet/node{rank}/sys" \
    --topology-xml "$work/fleet/node{rank}/topology.xml" --fleet-output "$work/fleet.json" >"$work/mpi.txt" 2>&1
  got=$?
  [[ $got -eq 1 ]] || fail "packaged fleet run: exit $got, want 1 (node1 is x8): $(cat "$work/mpi.txt")"
  launch=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["launch"], len(d["nodes"]))' \
    "$work/fleet.json" 2>&1)
  [[ "$launch" == "mpi 2" ]] || fail "packaged fleet run: fleet document says '$launch', want 'mpi 2'"
else
  echo "no pcieval-mpi or no mpirun: the packaged fleet run not checked"
fi

# --- lintian ---
if command -v lintian >/dev/null; then
  # Errors and warnings fail; the ones argued away are in packaging/lintian/
  # (installed as overrides). Info tags are printed, not judged.
  lintian --display-info --tag-display-limit 0 "${packages[@]}" >"$work/lintian.txt" 2>&1
  cat "$work/lintian.txt"
  if grep -Eq '^[EW]: ' "$work/lintian.txt"; then
    fail "lintian: $(grep -Ec '^E: ' "$work/lintian.txt") errors, $(grep -Ec '^W: ' "$work/lintian.txt") warnings"
  fi
else
  echo "lintian not installed (scripts/install-deps.sh --test): packages not linted"
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "packages: $(for p in "${packages[@]}"; do basename "$p"; done | tr '\n' ' ')- all checks pass"
