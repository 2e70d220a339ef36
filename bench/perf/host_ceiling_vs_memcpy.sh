#!/usr/bin/env bash
# The host ceiling probe's copy against a plain multi-threaded memcpy of the
# same bytes, in one run of the Google Benchmark suite (bench/perf/micro). The
# probe must reach at least 90% of the plain copy: less means the engine's own
# overhead (barriers, binding, timing) hides bandwidth it claims to measure.
#
#   bench/perf/host_ceiling_vs_memcpy.sh [-b BUILD_DIR] [-r REPETITIONS]
set -euo pipefail

build_dir=build
repetitions=5
while getopts "b:r:h" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    r) repetitions=$OPTARG ;;
    *) sed -n '2,8p' "$0"; exit 2 ;;
  esac
done

suite="$build_dir/bench/pcieval_micro_bench"
if [[ ! -x "$suite" ]]; then
  echo "error: $suite not built (needs libbenchmark-dev; run 'make bench')" >&2
  exit 2
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$suite" --benchmark_filter='BM_(HostCeilingCopy|PlainThreadedMemcpy)/' \
  --benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true \
  --benchmark_format=json >"$out"

python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
medians = {}
for b in doc["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name, size = b["run_name"].split("/")[0], int(b["run_name"].split("/")[1].split("/")[0])
    medians[(name, size)] = (b["bytes_per_second"] / 1e9, int(b.get("workers", 0)))
ok = True
print(f"{'size':>10}  {'probe GB/s':>10}  {'memcpy GB/s':>11}  {'ratio':>6}")
for size in sorted({s for _, s in medians}):
    probe, threads = medians[("BM_HostCeilingCopy", size)]
    plain, _ = medians[("BM_PlainThreadedMemcpy", size)]
    ratio = probe / plain
    ok &= ratio >= 0.90
    print(f"{size >> 20:>6} MiB  {probe:>10.2f}  {plain:>11.2f}  {ratio:>6.3f}  ({threads} threads, median of runs)")
ctx = doc["context"]
print(f"host: {ctx.get('host_name')}, {ctx.get('num_cpus')} CPUs, {ctx.get('date')}")
if not ok:
    print("FAIL: the probe's copy is below 90% of a plain threaded memcpy", file=sys.stderr)
    sys.exit(1)
print("PASS: the probe's copy reaches at least 90% of a plain threaded memcpy")
PY
