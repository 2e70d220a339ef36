#!/usr/bin/env bash
# The host ceiling probe's copy against a plain multi-threaded memcpy of the
# same bytes (bench/perf/micro, BM_HostCeilingCopy and BM_PlainThreadedMemcpy:
# same thread count, threads created once and started together at a barrier,
# timed from the release to the last thread's end). The probe must reach at
# least 90% of the plain copy: less means the engine's own overhead (barriers,
# binding, poisoning, timing) hides bandwidth it claims to measure.
#
# This machine may be shared, so the two are run as pairs, each benchmark in
# a process of its own, A B then B A alternately (one pair's two runs seconds
# apart), and the verdict is on the median of the pairwise ratios, printed
# with their spread (min-max): a pair shares whatever load the machine had.
#
#   bench/perf/host_ceiling_vs_memcpy.sh [-b BUILD_DIR] [-r PAIRS] [-s "MIB ..."]
set -euo pipefail

build_dir=build
pairs=9
sizes="256"
while getopts "b:r:s:h" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    r) pairs=$OPTARG ;;
    s) sizes=$OPTARG ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
  esac
done

suite="$build_dir/bench/pcieval_micro_bench"
if [[ ! -x "$suite" ]]; then
  echo "error: $suite not built (needs libbenchmark-dev; run 'make bench')" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# GB/s of one benchmark at one size, in a process of its own.
rate() {
  "$suite" --benchmark_filter="^$1/$(( $2 << 20 ))/" --benchmark_format=json >"$work/run.json"
  python3 -c '
import json, sys
runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"]
if len(runs) != 1 or "error_message" in runs[0]:
    sys.exit("benchmark did not run: %s" % (runs[0].get("error_message") if runs else "no run"))
print(runs[0]["bytes_per_second"] / 1e9, int(runs[0].get("workers", 0)))' "$work/run.json"
}

status=0
for size in $sizes; do
  : >"$work/pairs"
  for i in $(seq "$pairs"); do
    if (( i % 2 )); then
      read -r probe threads < <(rate BM_HostCeilingCopy "$size")
      read -r plain _ < <(rate BM_PlainThreadedMemcpy "$size")
    else
      read -r plain _ < <(rate BM_PlainThreadedMemcpy "$size")
      read -r probe threads < <(rate BM_HostCeilingCopy "$size")
    fi
    echo "$probe $plain $threads" >>"$work/pairs"
  done
  python3 - "$work/pairs" "$size" <<'PY' || status=1
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
size = sys.argv[2]
for n, (probe, plain, _) in enumerate(rows, 1):
    print(f"  pair {n}: probe {probe:6.2f} GB/s  memcpy {plain:6.2f} GB/s  ratio {probe / plain:.3f}")
ratios = [p / m for p, m, _ in rows]
median = statistics.median(ratios)
print(f"{size} MiB, {int(rows[0][2])} threads, {len(rows)} pairs: probe median {statistics.median(p for p, _, _ in rows):.2f} GB/s"
      f" ({min(p for p, _, _ in rows):.2f}-{max(p for p, _, _ in rows):.2f}), memcpy median"
      f" {statistics.median(m for _, m, _ in rows):.2f} GB/s ({min(m for _, m, _ in rows):.2f}-{max(m for _, m, _ in rows):.2f})")
print(f"ratio probe/memcpy: median {median:.3f}, spread {min(ratios):.3f}-{max(ratios):.3f}")
if median < 0.90:
    print(f"FAIL: the probe's copy is below 90% of a plain threaded memcpy at {size} MiB", file=sys.stderr)
    sys.exit(1)
PY
done
if (( status )); then exit 1; fi
echo "PASS: the probe's copy reaches at least 90% of a plain threaded memcpy"
