#!/usr/bin/env bash
# Times `pcieval check` against hwloc's own lstopo on the largest fixture
# machine (the DGX-2-like node: 77 PCI functions, 16 GPUs behind two levels of
# switches), and reports pcieval's peak resident memory.
#
# Both tools read the same hwloc XML; pcieval also reads the sysfs tree and
# judges every path, lstopo renders every I/O object (--filter io:all) as text.
# The point is scale, not a race: pcieval should cost about what listing the
# topology costs.
#
# Usage: bench/perf/check_vs_lstopo.sh [-n RUNS] [-b BUILD_DIR]
#   RUNS       runs of each command (default 20)
#   BUILD_DIR  where pcieval and fixtures/ were built (default: <repo>/build)
# Exits non-zero only when a command cannot be run; verdicts do not matter.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
runs=20
build="$repo/build"
while getopts "n:b:h" option; do
  case "$option" in
    n) runs=$OPTARG ;;
    b) build=$OPTARG ;;
    *) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "check_vs_lstopo: -n needs a positive number, got '$runs'" >&2; exit 2; }

die() { echo "check_vs_lstopo: $*" >&2; exit 1; }

pcieval="$build/pcieval"
[[ -x "$pcieval" ]] || die "no $pcieval; build it first: cmake --build $build --target pcieval"
command -v lstopo-no-graphics >/dev/null || die "lstopo-no-graphics not found (Debian: hwloc package)"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

machine=dgx2_16gpu_plx_gen3
fixture="$build/fixtures/$machine"
if [[ ! -f "$fixture/topology.xml" ]]; then
  python3 "$repo/tests/fixtures/make_fixtures.py" --out "$scratch/fixtures" --only "$machine" ||
    die "cannot generate the $machine fixture"
  fixture="$scratch/fixtures/$machine"
fi

# The results document goes to a scratch file, not /dev/null: pcieval writes
# it atomically (temporary file + rename), which must not target a device node.
pcieval_cmd=("$pcieval" check --quiet --sysfs-root "$fixture/sys" --topology-xml "$fixture/topology.xml"
  -o "$scratch/results.json")
lstopo_cmd=(lstopo-no-graphics -i "$fixture/topology.xml" --filter io:all --of console)

# pcieval exits 0 pass, 1 fail, 3 inconclusive: all three mean it ran.
run_pcieval() {
  local status=0
  "${pcieval_cmd[@]}" >/dev/null 2>"$scratch/pcieval.err" || status=$?
  if [[ $status -ne 0 && $status -ne 1 && $status -ne 3 ]]; then
    cat "$scratch/pcieval.err" >&2
    die "pcieval check exited $status"
  fi
}
run_lstopo() {
  "${lstopo_cmd[@]}" >/dev/null 2>"$scratch/lstopo.err" || { cat "$scratch/lstopo.err" >&2; die "lstopo failed"; }
}

# Mean wall time in milliseconds of RUNS calls of a function, after one warm-up
# call that brings the files into the page cache.
mean_ms() {
  local fn=$1 start end i
  "$fn"
  start=$(date +%s%N)
  for ((i = 0; i < runs; i++)); do "$fn"; done
  end=$(date +%s%N)
  awk -v ns=$((end - start)) -v n="$runs" 'BEGIN { printf "%.3f", ns / n / 1e6 }'
}

# Peak RSS in KiB, and how it was measured.
peak_rss() {
  if [[ -x /usr/bin/time ]] && /usr/bin/time -v true >/dev/null 2>&1; then
    /usr/bin/time -v "${pcieval_cmd[@]}" >/dev/null 2>"$scratch/time.out" || true
    awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 " /usr/bin/time -v" }' "$scratch/time.out"
  elif command -v python3 >/dev/null; then
    # getrusage of the waited-for child: exact, like time -v.
    python3 - "${pcieval_cmd[@]}" <<'EOF'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "getrusage(RUSAGE_CHILDREN)")
EOF
  else
    # Last resort: sample VmHWM while it runs. A run of a few milliseconds can
    # end between samples, so this is a lower bound.
    "${pcieval_cmd[@]}" >/dev/null 2>&1 &
    local pid=$! hwm=0 value
    while value=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null); do
      [[ -n "$value" && "$value" -gt "$hwm" ]] && hwm=$value
      kill -0 "$pid" 2>/dev/null || break
    done
    wait "$pid" || true
    echo "$hwm /proc/$pid/status VmHWM, sampled (lower bound)"
  fi
}

functions=$(find "$fixture/sys/bus/pci/devices" -mindepth 1 -maxdepth 1 | wc -l)
pcieval_ms=$(mean_ms run_pcieval)
lstopo_ms=$(mean_ms run_lstopo)
read -r rss_kib rss_how < <(peak_rss)
[[ -n "${rss_kib:-}" ]] || die "could not measure pcieval's peak RSS"

echo "fixture: $machine ($functions PCI functions), $runs runs each"
printf '%-34s %10.3f ms\n' "pcieval check, mean wall time" "$pcieval_ms"
printf '%-34s %10.3f ms\n' "lstopo --of console, mean wall time" "$lstopo_ms"
awk -v a="$pcieval_ms" -v b="$lstopo_ms" 'BEGIN { printf "%-34s %10.2f\n", "ratio pcieval / lstopo", (b > 0 ? a / b : 0) }'
awk -v k="$rss_kib" -v how="$rss_how" 'BEGIN { printf "%-34s %10.1f MiB (%s)\n", "pcieval peak RSS", k / 1024, how }'

# Instructions are repeatable where wall time is not (shared, noisy machines):
# callgrind counts the same total for the same binary and inputs every time.
# Wall time also pays for pcieval's ~1000 sysfs opens and the fsync of its
# results document, which instructions do not show.
if command -v valgrind >/dev/null; then
  instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
      awk '/ refs:/ { gsub(/,/, "", $NF); print $NF }'
  }
  pcieval_ir=$(instructions "${pcieval_cmd[@]}")
  lstopo_ir=$(instructions "${lstopo_cmd[@]}")
  awk -v a="$pcieval_ir" -v b="$lstopo_ir" 'BEGIN {
    printf "%-34s %10.2f M\n%-34s %10.2f M\n%-34s %10.2f\n", "pcieval instructions (callgrind)", a / 1e6,
      "lstopo instructions (callgrind)", b / 1e6, "instruction ratio pcieval / lstopo", (b > 0 ? a / b : 0) }'
fi
