#!/usr/bin/env bash
# The engine's own overhead on the simulated node (issue 27): the wall time of
# `pcieval check --quick --simulate` on the healthy 8-GPU scenario against the
# sum of its modelled copy times, read back from the results document (every
# warm-up and timed trial's bytes over the rate the model gave it; a probe
# whose GPUs copy together counted once, by its total). What is left is
# pcieval's and the simulator's host work: allocating and filling pinned
# buffers, the real memcpy of every byte, verifying every copy, the latch,
# the link sampler and NVML, and the pageable copies' real-time staging.
#
#   bench/perf/simulate_overhead.sh [-b BUILD_DIR] [-n RUNS] [-s SCENARIO] [-- CHECK FLAGS]
set -euo pipefail

build_dir=build
runs=3
scenario=tests/sim/scenarios/healthy_hgx_a100.json
while getopts "b:n:s:h" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    n) runs=$OPTARG ;;
    s) scenario=$OPTARG ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

pcieval="$build_dir/pcieval"
if [[ ! -x "$pcieval" || ! -f "$build_dir/sim/libpcieval_sim_cuda.so" ]]; then
  echo "error: $pcieval and the simulator (sim/) are not built: run 'make build'" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for ((i = 1; i <= runs; i++)); do
  start=$(date +%s.%N)
  status=0
  /usr/bin/env time -f "%U %S" -o "$work/cpu$i" \
    "$pcieval" check --quick --simulate "$scenario" -q -o "$work/run$i.json" "$@" || status=$?
  end=$(date +%s.%N)
  if [[ $status -ne 0 ]]; then
    echo "error: run $i exited $status (the healthy scenario passes with 0)" >&2
    exit 1
  fi
  echo "$start $end" >"$work/wall$i"
done

python3 - "$work" "$runs" <<'PY'
import json, statistics, sys

work, runs = sys.argv[1], int(sys.argv[2])

def modelled_seconds(doc):
    settings = doc["probe_settings"]
    passes = settings["warmup_trials"] + settings["trials"]
    total = 0.0
    for m in doc["measurements"]:
        rate = m.get("median_gbps") or 0
        if rate <= 0:
            continue
        aggregation = m["aggregation"]
        if aggregation == "with_peers":
            continue  # counted by the probe's total over its wall time
        if aggregation == "bus_bandwidth":
            # nccl-tests' busbw carries 2(n-1)/n of the buffer per rank.
            n = len(m["gpus"])
            total += passes * m["size_bytes"] * 2 * (n - 1) / n / (rate * 1e9)
            continue
        total += passes * m["bytes_per_trial"] / (rate * 1e9)
    return total

rows = []
for i in range(1, runs + 1):
    doc = json.load(open(f"{work}/run{i}.json"))
    start, end = map(float, open(f"{work}/wall{i}").read().split())
    user, system = map(float, open(f"{work}/cpu{i}").read().split()[-2:])
    rows.append((end - start, modelled_seconds(doc), user + system))
for i, (wall, model, cpu) in enumerate(rows, 1):
    print(f"run {i}: wall {wall:.1f} s, modelled copies {model:.2f} s, overhead {wall - model:.1f} s "
          f"({wall / model:.1f}x the model), CPU {cpu:.1f} s")
walls = [r[0] for r in rows]
ratios = [r[0] / r[1] for r in rows]
print(f"median wall {statistics.median(walls):.1f} s (spread {min(walls):.1f}-{max(walls):.1f}); "
      f"median wall/modelled {statistics.median(ratios):.1f}x (spread {min(ratios):.1f}-{max(ratios):.1f})")
PY
