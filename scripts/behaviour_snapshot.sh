#!/usr/bin/env bash
# Every output pcieval writes for every fixture, in one folder, so that a
# refactor can prove it changed no verdict, exit code or document:
#
#   scripts/behaviour_snapshot.sh -b BUILD_DIR -o OUT_DIR [-c CORPUS_DIR]
#   diff -r BEFORE_DIR AFTER_DIR      # empty: same behaviour
#
# Runs check (every fixture machine, from its sysfs tree and from its hwloc
# XML), diagnose (every capture of tests/fixtures/captures and, when given, of
# a corpus folder), validate, report, compare and fleet merge on what check
# wrote, and check --list-probes: check runs with --no-probes (measured
# numbers differ from run to run), so the probe registry is compared by its
# listing. Each command's stdout, stderr and exit code are kept with its files.
# What differs from run to run (clock times, durations, this machine's name,
# the scratch paths) is replaced by a fixed word before the files are kept.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build
out=""
corpus=""
while getopts "b:o:c:h" opt; do
  case "$opt" in
    b) build=$(cd "$OPTARG" && pwd) ;;
    o) out=$OPTARG ;;
    c) corpus=$(cd "$OPTARG" && pwd) ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
  esac
done
[[ -n "$out" ]] || { echo "behaviour_snapshot.sh: -o OUT_DIR is required" >&2; exit 2; }
pcieval=$build/pcieval
[[ -x "$pcieval" ]] || { echo "behaviour_snapshot.sh: no $pcieval (build it first)" >&2; exit 2; }
fixtures=$build/fixtures
[[ -d "$fixtures" ]] || { echo "behaviour_snapshot.sh: no $fixtures (build the tests once)" >&2; exit 2; }

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Times, durations and names of this run, and where its files lay.
normalise() {
  sed -E \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:?[0-9]{2})?/TIME/g' \
    -e 's/"(started|finished|started_s|finished_s|duration_s|time_s|elapsed_s|timestamp)": *[0-9.e+-]+/"\1": N/g' \
    -e 's/(pcieval_[a-z_]*(start|time|duration)[a-z_]*(\{[^}]*\})?) [0-9.e+-]+/\1 N/g' \
    -e 's/(time|timestamp)="[^"]*"/\1="T"/g' \
    -e 's/"hostname": "[^"]*"/"hostname": "HOST"/g' -e 's/(host(name)?)="[^"]*"/\1="HOST"/g' \
    -e "s#$work#WORK#g" -e "s#$root#ROOT#g" "$1"
}

# run NAME ARGS...: runs pcieval in a scratch folder and keeps what it wrote.
run() {
  local name=$1
  shift
  local dir=$work/$name
  mkdir -p "$dir"
  local rc=0
  (cd "$dir" && "$pcieval" "$@" >stdout 2>stderr) || rc=$?
  echo "$rc" >"$dir/exit_code"
  mkdir -p "$out/$name"
  for file in "$dir"/*; do
    [[ -f "$file" ]] || continue
    normalise "$file" >"$out/$name/$(basename "$file")"
  done
}

for machine in "$fixtures"/*/; do
  machine=$(basename "$machine")
  run "check-sysfs-$machine" check --sysfs-root "$fixtures/$machine/sys" --no-probes \
    -o results.json --prom metrics.prom --junit junit.xml --html report.html
  run "check-xml-$machine" check --topology-xml "$fixtures/$machine/topology.xml" --no-probes -o results.json
done

captures=("$root"/tests/fixtures/captures/*)
[[ -n "$corpus" ]] && captures+=("$corpus"/*)
for capture in "${captures[@]}"; do
  name=$(basename "$capture")
  [[ "$name" == README.md || "$name" == SOURCES.md ]] && continue
  prefix=diagnose
  [[ "$capture" == "$corpus"/* ]] && prefix=corpus
  if [[ "$name" == hwloc_*.xml ]]; then
    run "$prefix-$name" check --topology-xml "$capture" --no-probes -o results.json
    continue
  fi
  run "$prefix-$name" diagnose "$capture" -o results.json --junit junit.xml
done
# Captures read together, as a ticket pastes them.
run diagnose-esc8000a-together diagnose "$root"/tests/fixtures/captures/lspci_esc8000a_e12_idle_gpus_highpoint_x1.txt \
  "$root"/tests/fixtures/captures/nvsmi_esc8000a_e12_4xrtx6000ada_busy_c1_gen3.txt \
  "$root"/tests/fixtures/captures/dmesg_esc8000a_e12_c1_aer_corrected.txt -o results.json

# What reads a results document: validate, report, compare, fleet merge.
documents=()
for doc in "$work"/check-sysfs-*/results.json; do
  machine=$(basename "$(dirname "$doc")")
  machine=${machine#check-sysfs-}
  cp "$doc" "$work/$machine.json"
  documents+=("$work/$machine.json")
  run "validate-$machine" validate "$work/$machine.json" -o results.json
  run "report-$machine" report "$work/$machine.json" --html report.html --prom metrics.prom --junit junit.xml --table
done
for example in "$root"/results_schema/examples/*.json; do
  name=$(basename "$example" .json)
  [[ "$name" == fleet-* ]] && continue
  run "validate-example-$name" validate "$example" -o results.json
  run "report-example-$name" report "$example" --table
done
run compare-gen4-vs-x8 compare "$work/hgx_a100_8gpu_gen4.json" "$work/hgx_a100_8gpu_gpu_x8.json"
run compare-x8-vs-gen4 compare "$work/hgx_a100_8gpu_gpu_x8.json" "$work/hgx_a100_8gpu_gen4.json"
run fleet-merge fleet merge "${documents[@]}" -o fleet.json --html fleet.html
run list-probes check --list-probes
run usage-unknown-command chek
run usage-bad-rounds check --rounds 0

count=$(find "$out" -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "behaviour_snapshot.sh: $count runs kept in $out"
