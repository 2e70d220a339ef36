#!/usr/bin/env bash
# `pcieval fleet merge` of 1,000 and of 10,000 generated node documents (and
# 100,000 with -L): wall time, CPU time and peak RSS (GNU time -v), and how
# they grow from one size to the next. The documents are GENERATED DATA
# (bench/perf/fleet_docs.py): `pcieval check` of the HGX A100 8-GPU fixture
# machine, copied per node with its own host name and generated h2d_ce/d2h_ce
# medians for its 8 GPUs, three of them slow. Merge reads each document once
# and keeps only its node entry, so memory should grow with the GPUs kept (a
# few KiB per node), not with the documents' bytes, and time linearly.
#
#   bench/perf/fleet_merge_scale.sh [-b BUILD_DIR] [-n "1000 10000"] [-L] [-j JOBS] [-c OTHER_PCIEVAL] [-k]
#   -L adds 100,000 documents (5.5 GB of generated files, ~4 minutes to write)
#   -j passes --jobs JOBS to the merge (default: its own, one per usable CPU)
#   -c also merges each set with OTHER_PCIEVAL (an older build, no --jobs),
#      right after this build, so both are measured under the same load
#   -k keeps the generated documents (in a temporary directory, printed)
# The load average is printed before and after: on a shared machine compare
# rows of one run, not of two.
set -euo pipefail

build_dir=build
counts="1000 10000"
jobs=""
other=""
keep=0
while getopts "b:n:Lj:c:kh" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    n) counts=$OPTARG ;;
    L) counts="$counts 100000" ;;
    j) jobs=$OPTARG ;;
    c) other=$OPTARG ;;
    k) keep=1 ;;
    *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
pcieval="$build_dir/pcieval"
fixture="$build_dir/fixtures/hgx_a100_8gpu_gen4"
for need in "$pcieval" "$fixture/topology.xml" /usr/bin/time ${other:+"$other"}; do
  [[ -e "$need" ]] || { echo "error: $need is missing (build first: make build; GNU time: apt-get install time)" >&2; exit 2; }
done
work=$(mktemp -d)
if [[ $keep -eq 0 ]]; then trap 'rm -rf "$work"' EXIT; else echo "documents kept in $work" >&2; fi

"$pcieval" check --sysfs-root "$fixture/sys" --topology-xml "$fixture/topology.xml" -q -o "$work/base.json" || true
[[ -s "$work/base.json" ]] || { echo "error: pcieval check wrote no base document" >&2; exit 2; }

echo "cpus $(nproc), load average before: $(cut -d' ' -f1-3 /proc/loadavg), jobs ${jobs:-default}"
# CPU_S (user + system) is steadier than WALL_S on a shared machine.
printf '%-8s %-8s %-8s %-8s %-8s %-12s %-12s %s\n' NODES BINARY DOC_MB WALL_S CPU_S PEAK_RSS_MB RSS_KB/NODE \
  "EXIT (outliers)"

# merge LABEL BINARY N DIR [FLAGS...]: one timed merge; prints its row and
# sets `measured` to "wall cpu rss_kb".
merge() {
  local label=$1 binary=$2 n=$3 dir=$4
  shift 4
  set +e
  # The kernel takes a quarter of the stack limit for arguments: 100,000
  # paths (~5 MB with their pointers) need more than the usual 8 MiB / 4.
  (ulimit -s 65536 && exec /usr/bin/time -v -o "$work/time.txt" "$binary" fleet merge -q "$@" "$dir"/*.json \
    -o "$work/fleet$n.$label.json")
  local code=$?
  set -e
  local wall cpu rss_kb outliers
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$work/time.txt")
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  outliers=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['outliers']))" \
    "$work/fleet$n.$label.json")
  printf '%-8s %-8s %-8s %-8s %-8s %-12s %-12s %s\n' "$n" "$label" "$doc_mb" "$wall" "$cpu" "$((rss_kb / 1024))" \
    "$((rss_kb / n))" "$code ($outliers)"
  measured="$wall $cpu $rss_kb"
}

previous=""
for n in $counts; do
  dir="$work/n$n"
  python3 "$here/fleet_docs.py" --base "$work/base.json" --out "$dir" --count "$n" --prefix node \
    --slow 1:2:21.0 --slow "$((n / 2))":5:20.5 --slow "$((n - 1))":7:19.9
  doc_mb=$(du -sm "$dir" | cut -f1)
  # The file list goes through globbing, not xargs, so one merge sees every
  # document.
  merge this "$pcieval" "$n" "$dir" ${jobs:+--jobs "$jobs"}
  this_run=$measured
  if [[ -n "$other" ]]; then
    merge other "$other" "$n" "$dir"
    read -r w c _ <<<"$this_run"
    read -r ow oc _ <<<"$measured"
    python3 -c "import sys; w,c,ow,oc=map(float,sys.argv[1:5]); print(f'this build against the other at {sys.argv[5]} nodes: wall time x{w/ow:.2f}, CPU time x{c/oc:.2f}')" \
      "$w" "$c" "$ow" "$oc" "$n"
    cmp -s "$work/fleet$n.this.json" "$work/fleet$n.other.json" &&
      echo "fleet documents of both builds are identical" || echo "fleet documents of both builds DIFFER"
  fi
  if [[ -n "$previous" ]]; then
    read -r pn pwall pcpu prss <<<"$previous"
    read -r wall cpu rss <<<"$this_run"
    python3 -c "import sys; n,w,c,r,pn,pw,pc,pr=map(float,sys.argv[1:]); print(f'growth {int(pn)} -> {int(n)} nodes (x{n/pn:.0f}): wall time x{w/pw:.1f}, CPU time x{c/pc:.1f}, peak RSS x{r/pr:.1f}')" \
      "$n" "$wall" "$cpu" "$rss" "$pn" "$pwall" "$pcpu" "$prss"
  fi
  previous="$n $this_run"
  rm -rf "$dir" "$work"/fleet"$n".*.json
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
