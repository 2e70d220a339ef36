#!/usr/bin/env bash
# `pcieval fleet merge` of 1,000 and of 10,000 generated node documents: wall
# time and peak RSS (GNU time -v), and how they grow. The documents are
# GENERATED DATA (bench/fleet_docs.py): `pcieval check` of the HGX A100 8-GPU
# fixture machine, copied per node with its own host name and generated
# h2d_ce/d2h_ce medians for its 8 GPUs, three of them slow. Merge reads each
# document strictly and keeps only its node entry, so memory should grow with
# the GPUs kept (a few KiB per node), not with the documents' bytes, and time
# about linearly.
#
#   bench/fleet_merge_scale.sh [-b BUILD_DIR] [-n "1000 10000"] [-k]
#   -k keeps the generated documents (in a temporary directory, printed)
set -euo pipefail

build_dir=build
counts="1000 10000"
keep=0
while getopts "b:n:kh" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    n) counts=$OPTARG ;;
    k) keep=1 ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
pcieval="$build_dir/pcieval"
fixture="$build_dir/fixtures/hgx_a100_8gpu_gen4"
for need in "$pcieval" "$fixture/topology.xml" /usr/bin/time; do
  [[ -e "$need" ]] || { echo "error: $need is missing (build first: make build; GNU time: apt-get install time)" >&2; exit 2; }
done
work=$(mktemp -d)
if [[ $keep -eq 0 ]]; then trap 'rm -rf "$work"' EXIT; else echo "documents kept in $work" >&2; fi

"$pcieval" check --sysfs-root "$fixture/sys" --topology-xml "$fixture/topology.xml" -q -o "$work/base.json" || true
[[ -s "$work/base.json" ]] || { echo "error: pcieval check wrote no base document" >&2; exit 2; }

# CPU_S (user + system) is steadier than WALL_S on a shared machine.
printf '%-8s %-8s %-8s %-8s %-12s %-12s %s\n' NODES DOC_MB WALL_S CPU_S PEAK_RSS_MB RSS_KB/NODE "EXIT (outliers)"
previous=""
for n in $counts; do
  dir="$work/n$n"
  python3 "$here/fleet_docs.py" --base "$work/base.json" --out "$dir" --count "$n" --prefix node \
    --slow 1:2:21.0 --slow "$((n / 2))":5:20.5 --slow "$((n - 1))":7:19.9
  doc_mb=$(du -sm "$dir" | cut -f1)
  # The file list goes through xargs-free globbing: 10,000 paths are ~0.3 MB,
  # well under ARG_MAX.
  set +e
  /usr/bin/time -v -o "$work/time.txt" "$pcieval" fleet merge -q "$dir"/*.json -o "$work/fleet$n.json"
  code=$?
  set -e
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$work/time.txt")
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  outliers=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['outliers']))" "$work/fleet$n.json")
  printf '%-8s %-8s %-8s %-8s %-12s %-12s %s\n' "$n" "$doc_mb" "$wall" "$cpu" "$((rss_kb / 1024))" "$((rss_kb / n))" \
    "$code ($outliers)"
  if [[ -n "$previous" ]]; then
    read -r pn pwall pcpu prss <<<"$previous"
    python3 -c "import sys; n,w,c,r,pn,pw,pc,pr=map(float,sys.argv[1:]); print(f'growth {int(pn)} -> {int(n)} nodes (x{n/pn:.0f}): wall time x{w/pw:.1f}, CPU time x{c/pc:.1f}, peak RSS x{r/pr:.1f}')" \
      "$n" "$wall" "$cpu" "$rss_kb" "$pn" "$pwall" "$pcpu" "$prss"
  fi
  previous="$n $wall $cpu $rss_kb"
  rm -rf "$dir"
done
