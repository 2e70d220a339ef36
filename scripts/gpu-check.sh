#!/usr/bin/env bash
# make gpu-check: the one command a session lent a GPU runs. It proves the GPU
# path of pcieval or says exactly what broke, within a budget of a few
# minutes, and leaves everything in one small folder to copy back.
#
#   scripts/gpu-check.sh [-b BUILD_DIR] [-o OUT_DIR] [-t BUDGET_S] [-j JOBS]
#
#   -b  a prebuilt build folder (pcieval, tests/test_gpu and, with CUDA,
#       pcieval-copy-reference in it): nothing is built. Without -b the three
#       targets are built in ./build (configured if needed).
#   -o  the output folder; default $OUT when set, else ./gpu-check-<time>.
#   -t  the total budget in seconds (default 420): steps that would start
#       after it are recorded as not run.
#
# Steps, in order: the preflight (can the GPU part run at all: the binary
# starts, its libraries resolve, the CUDA driver loads; persistence mode and
# /dev/shm noted), which stops the GPU part in one line when it cannot;
# environment capture; pcieval-copy-reference; pcieval check --full -o and
# the ratios to the reference (the numbers the run exists for, first); then
# the GPU test suite one test at a time, each under a timeout, with what is
# left of the budget; the summary (summary.md). Where nvidia-smi lists a GPU, PCIEVAL_REQUIRE_GPU=1
# is set, so a GPU test that would skip fails instead: a GPU run never comes
# out green by skipping. Without a GPU the GPU part is skipped, with the
# reason, and the script still exits 0.
#
# Exit: 0 every step that ran passed (or there is no GPU); 1 a GPU test
# failed or timed out, a tool crashed or was refused, or pcieval's copy rate
# is below 0.97 of the reference; 2 bad usage or nothing to run with.
set -uo pipefail

build_dir=""
out_dir="${OUT:-}"
budget_s=420
jobs=$(nproc 2>/dev/null || echo 2)
while getopts "b:o:t:j:h" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    o) out_dir=$OPTARG ;;
    t) budget_s=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) sed -n '2,24p' "$0"; exit 2 ;;
  esac
done
[[ "$budget_s" =~ ^[0-9]+$ ]] || { echo "gpu-check: -t takes whole seconds" >&2; exit 2; }
source_dir=$(cd "$(dirname "$0")/.." && pwd)
[[ -n "$out_dir" ]] || out_dir="$PWD/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out_dir" || { echo "gpu-check: cannot create $out_dir" >&2; exit 2; }
out_dir=$(cd "$out_dir" && pwd)
started_s=$SECONDS

# Every file is cut at this size, so the folder stays small enough to copy
# back (the summary says when a file was cut).
max_file_bytes=$((256 * 1024))
cap() {  # cap FILE: keep the first max_file_bytes bytes
  local file=$1 size
  [[ -f "$file" ]] || return 0
  size=$(stat -c %s "$file")
  if ((size > max_file_bytes)); then
    head -c "$max_file_bytes" "$file" >"$file.cut" && mv "$file.cut" "$file"
    printf '\n[cut by gpu-check at %d of %d bytes]\n' "$max_file_bytes" "$size" >>"$file"
  fi
}
left_s() { echo $((budget_s - (SECONDS - started_s))); }
log() { echo "gpu-check: $*" >&2; }

steps=()  # "| step | status | detail |" rows of the summary
failed=0
step() {  # step NAME STATUS DETAIL
  steps+=("| $1 | $2 | $3 |")
  [[ "$2" == FAIL* ]] && failed=1
  return 0
}

# A simulated node is never measured as hardware: its numbers are a model's.
if [[ -n "${PCIEVAL_SIMULATE:-}" ]]; then
  echo "gpu-check: PCIEVAL_SIMULATE is set: gpu-check measures a real GPU; unset it (simulated runs: pcieval check --simulate)" >&2
  exit 2
fi

# --- Is there a GPU?
gpu_listed=""
no_gpu_reason=""
if ! command -v nvidia-smi >/dev/null 2>&1; then
  no_gpu_reason="nvidia-smi not found (no NVIDIA driver installed)"
elif ! nvidia-smi -L >"$out_dir/nvidia-smi-L.txt" 2>&1; then
  no_gpu_reason="nvidia-smi -L failed: $(head -c 300 "$out_dir/nvidia-smi-L.txt" | tr '\n' ' ')"
elif ! grep -q '^GPU ' "$out_dir/nvidia-smi-L.txt"; then
  no_gpu_reason="nvidia-smi -L lists no GPU"
else
  gpu_listed=$(grep -c '^GPU ' "$out_dir/nvidia-smi-L.txt")
  export PCIEVAL_REQUIRE_GPU=1
fi
if [[ -n "$gpu_listed" ]]; then log "$gpu_listed GPU(s) listed: GPU tests must run, not skip"; else log "no GPU: $no_gpu_reason"; fi

# --- Build (only the three targets), unless a prebuilt folder was given.
if [[ -z "$build_dir" ]]; then
  build_dir="$source_dir/build"
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out_dir/build.log" 2>&1 ||
      { cap "$out_dir/build.log"; echo "gpu-check: configure failed, see $out_dir/build.log" >&2; exit 2; }
  fi
  if ! cmake --build "$build_dir" -j "$jobs" --target pcieval --target test_gpu --target pcieval-copy-reference \
    >>"$out_dir/build.log" 2>&1; then
    # Without CUDA there is no reference target: build the other two.
    cmake --build "$build_dir" -j "$jobs" --target pcieval --target test_gpu >>"$out_dir/build.log" 2>&1 ||
      { cap "$out_dir/build.log"; echo "gpu-check: build failed, see $out_dir/build.log" >&2; exit 2; }
  fi
  cap "$out_dir/build.log"
fi
build_dir=$(cd "$build_dir" && pwd)
pcieval="$build_dir/pcieval"
test_gpu="$build_dir/tests/test_gpu"
reference="$build_dir/pcieval-copy-reference"
[[ -x "$pcieval" ]] || { echo "gpu-check: $pcieval not built" >&2; exit 2; }
[[ -x "$test_gpu" ]] || { echo "gpu-check: $test_gpu not built" >&2; exit 2; }

# --- 0. Preflight: can the GPU part run here at all? Whatever stops it is
# said in one line, and the GPU steps are then not run, instead of each
# failing on its own with the same cause.
preflight_problems=()
preflight_notes=()
missing_libraries=$(ldd "$pcieval" 2>&1 | awk '/not found/ { print $1 }' | tr '\n' ' ')
[[ -z "$missing_libraries" ]] ||
  preflight_problems+=("shared libraries not found: ${missing_libraries% } (docs/measuring-on-a-gpu.md lists the packages)")
version_rc=0
version_text=$("$pcieval" --version 2>&1) || version_rc=$?
if ((version_rc != 0)); then
  # A glibc older than the build machine's fails here: "version `GLIBC_2.34' not found".
  preflight_problems+=("pcieval does not start (exit $version_rc): $(head -n 1 <<<"$version_text" | head -c 300)")
else
  driver_line=$(grep -m1 '^CUDA driver: ' <<<"$version_text" || true)
  preflight_notes+=("${driver_line:-CUDA driver: not reported}")
  if [[ -n "$gpu_listed" && "$driver_line" != *" driver API ("* ]]; then
    preflight_problems+=("the CUDA driver cannot be used: ${driver_line#CUDA driver: }")
  fi
  if grep -q '^GPU kernels: none' <<<"$version_text"; then
    preflight_problems+=("this build has no GPU kernels (nvcc was not found when it was built)")
  fi
fi
preflight_notes+=("glibc $(ldd --version 2>&1 | head -n 1 | awk '{ print $NF }')")
if [[ -n "$gpu_listed" ]]; then
  persistence_off=$(nvidia-smi --query-gpu=persistence_mode --format=csv,noheader 2>/dev/null | grep -ci disabled || true)
  ((persistence_off == 0)) ||
    preflight_notes+=("persistence mode off on $persistence_off GPU(s): each process pays the driver's start-up")
fi
shm_free_bytes=$(df -B1 --output=avail /dev/shm 2>/dev/null | tail -n 1 | tr -d ' ')
if [[ "$shm_free_bytes" =~ ^[0-9]+$ ]] && ((shm_free_bytes < 1024 * 1024 * 1024)); then
  preflight_notes+=("/dev/shm has $((shm_free_bytes / 1024 / 1024)) MiB free: NCCL's host-path all-reduce of 8 ranks needs more (Docker: --shm-size=1g or --ipc=host)")
fi
preflight_detail=$(IFS=';'; echo "${preflight_notes[*]}" | sed 's/;/; /g')
preflight_failed=""
if ((${#preflight_problems[@]} > 0)); then
  preflight_failed=$(IFS=';'; echo "${preflight_problems[*]}" | sed 's/;/; /g')
  log "preflight: the GPU part cannot run: $preflight_failed"
  step preflight "FAIL" "$preflight_failed ($preflight_detail)"
else
  step preflight ok "$preflight_detail"
fi

# --- 1. Environment capture: each command under a short timeout; a missing
# tool is noted, never fatal.
env_dir="$out_dir/environment"
mkdir -p "$env_dir"
capture() {  # capture FILE COMMAND...
  local file="$env_dir/$1"
  shift
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "not captured: $1 not found" >"$file"
    return
  fi
  timeout 20 "$@" >"$file" 2>&1 || echo "[exit $? from: $*]" >>"$file"
  cap "$file"
}
{
  echo "date_utc: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  echo "kernel: $(uname -r)"
  grep -m1 '^model name' /proc/cpuinfo
  if grep -qw hypervisor /proc/cpuinfo; then echo "hypervisor flag: yes (a VM)"; else echo "hypervisor flag: no"; fi
  echo "nproc: $(nproc)"
  echo "ulimit -l: $(ulimit -l)"
  echo "CUDA_VISIBLE_DEVICES: ${CUDA_VISIBLE_DEVICES-unset}"
  echo "CUDA_LAUNCH_BLOCKING: ${CUDA_LAUNCH_BLOCKING-unset}"
  echo "PCIEVAL_REQUIRE_GPU: ${PCIEVAL_REQUIRE_GPU-unset}"
  echo "transparent_hugepage: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  echo "iommu groups: $(find /sys/kernel/iommu_groups -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
} >"$env_dir/host.txt"
capture numactl-H.txt numactl -H
capture lscpu.txt lscpu
capture ldd-pcieval.txt ldd "$pcieval"
capture ldd-test_gpu.txt ldd "$test_gpu"
"$pcieval" --version >"$env_dir/pcieval-version.txt" 2>&1 || true
if [[ -n "$gpu_listed" ]]; then
  capture nvidia-smi-q.txt nvidia-smi -q
  capture nvidia-smi-topo.txt nvidia-smi topo -m
  capture conf-compute.txt nvidia-smi conf-compute -f
  # lspci -vvv of each GPU and the port above it, and its sysfs link files.
  for bdf in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>/dev/null | tr 'A-F' 'a-f' |
    sed -E 's/^0000([0-9a-f]{4}):/\1:/'); do
    sysfs="/sys/bus/pci/devices/$bdf"
    [[ -e "$sysfs" ]] || continue
    parent=$(basename "$(dirname "$(readlink -f "$sysfs")")")
    capture "lspci-$bdf.txt" lspci -vvv -s "$bdf"
    [[ "$parent" =~ ^[0-9a-f]{4}: ]] && capture "lspci-$bdf-parent-$parent.txt" lspci -vvv -s "$parent"
    for dev in "$bdf" "$parent"; do
      for f in current_link_speed current_link_width max_link_speed max_link_width numa_node local_cpulist; do
        [[ -r "/sys/bus/pci/devices/$dev/$f" ]] && echo "$dev $f: $(cat "/sys/bus/pci/devices/$dev/$f" 2>/dev/null)"
      done
    done >>"$env_dir/sysfs-links.txt"
  done
fi
step environment ok "$(find "$env_dir" -type f | wc -l) files in environment/"

# --- 2. The reference copy benchmark, and 3. pcieval check --full.
reference_json="$out_dir/reference.json"
results_json="$out_dir/results.json"
if [[ -z "$gpu_listed" ]]; then
  step reference "skipped: no GPU" "$no_gpu_reason"
  step "pcieval check --full" "skipped: no GPU" "$no_gpu_reason"
elif [[ -n "$preflight_failed" ]]; then
  step reference "not run: preflight" "$preflight_failed"
  step "pcieval check --full" "not run: preflight" "$preflight_failed"
else
  if [[ ! -x "$reference" ]]; then
    step reference "FAIL" "$reference not built (no nvcc at build time?)"
  elif (($(left_s) < 20)); then
    step reference "FAIL (not run)" "budget spent"
  else
    # CUDA device 0 in PCI order is nvidia-smi's GPU 0; its NUMA node binds
    # the reference's CPU and memory, as pcieval binds its own buffers, so
    # the ratio compares machinery, not placement (issue 26 item 3).
    reference_bus_id=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0 2>/dev/null | head -n 1 |
      tr 'A-F' 'a-f' | sed -E 's/^0000([0-9a-f]{4}):/\1:/')
    reference_node=$(cat "/sys/bus/pci/devices/$reference_bus_id/numa_node" 2>/dev/null || echo -1)
    reference_bind=()
    reference_where="not NUMA-bound (the GPU's node is unknown)"
    if [[ "$reference_node" =~ ^[0-9]+$ ]] && command -v numactl >/dev/null 2>&1; then
      reference_bind=(numactl "--cpunodebind=$reference_node" "--membind=$reference_node")
      reference_where="bound to NUMA node $reference_node"
    elif [[ "$reference_node" =~ ^[0-9]+$ ]]; then
      reference_where="not NUMA-bound (numactl not installed; the GPU is on node $reference_node)"
    fi
    # Registered 4 KiB pages, as pcieval pins: the like-for-like yardstick
    # (reference.json, the 0.97 floor); then the driver's own pinned
    # allocation, recorded beside it (reference-hostalloc.json).
    CUDA_DEVICE_ORDER=PCI_BUS_ID timeout --kill-after=5 30 "${reference_bind[@]}" "$reference" --register \
      >"$reference_json" 2>"$out_dir/reference.stderr"
    rc=$?
    CUDA_DEVICE_ORDER=PCI_BUS_ID timeout --kill-after=5 30 "${reference_bind[@]}" "$reference" \
      >"$out_dir/reference-hostalloc.json" 2>>"$out_dir/reference.stderr" || true
    cap "$out_dir/reference.stderr"
    if ((rc == 0)); then
      step reference ok "device 0, registered and cudaHostAlloc buffers, $reference_where; see reference.json"
    else
      step reference "FAIL" "exit $rc: $(head -c 300 "$out_dir/reference.stderr" | tr '\n' ' ')"
    fi
  fi
  check_timeout=$(($(left_s) - 5))
  if ((check_timeout < 20)); then
    step "pcieval check --full" "FAIL (not run)" "budget spent"
  else
    ((check_timeout > 150)) && check_timeout=150
    # The reference's numbers go into the results document beside pcieval's.
    reference_flag=()
    [[ -s "$reference_json" ]] && reference_flag=(--reference "$reference_json")
    timeout --kill-after=10 "$check_timeout" "$pcieval" check --full "${reference_flag[@]}" -o "$results_json" \
      >"$out_dir/check.txt" 2>"$out_dir/check.stderr"
    rc=$?
    cap "$out_dir/check.txt"
    cap "$out_dir/check.stderr"
    case $rc in
      0) step "pcieval check --full" ok "exit 0: every verdict pass" ;;
      1) step "pcieval check --full" "ran" "exit 1: a failing verdict (see check.txt)" ;;
      3) step "pcieval check --full" "ran" "exit 3: inconclusive (see check.txt)" ;;
      124 | 137) step "pcieval check --full" "FAIL" "timed out after ${check_timeout} s" ;;
      *) step "pcieval check --full" "FAIL" "exit $rc (see check.stderr)" ;;
    esac
  fi
fi

# --- pcieval against the reference: the results document's reference_copies
# (check --reference), each ratio against the 0.97 floor of issue 17.
ratio_lines=""
if [[ -s "$reference_json" && -s "$results_json" ]]; then
  ratio_lines=$(python3 - "$results_json" "$out_dir/reference-hostalloc.json" <<'PY'
import json, sys
copies = json.load(open(sys.argv[1])).get("reference_copies", [])
try:
    hostalloc = json.load(open(sys.argv[2]))
except (OSError, ValueError):
    hostalloc = {}
worst = None if copies else 0.0
for c in copies:
    probe = {"h2d": "h2d_ce", "d2h": "d2h_ce"}[c["direction"]]
    other = hostalloc.get(c["direction"] + "_median_gbps")
    if c["ratio"] is None:
        print(f"| {probe} | - | {c['reference_median_gbps']:.2f} | - | - | not measured by pcieval |")
        worst = 0.0
        continue
    worst = c["ratio"] if worst is None else min(worst, c["ratio"])
    verdict = "ok" if c["ratio"] >= 0.97 else "BELOW 0.97"
    vs_hostalloc = f"{c['pcieval_median_gbps'] / other:.3f} ({other:.2f})" if other else "-"
    print(f"| {probe} | {c['pcieval_median_gbps']:.2f} | {c['reference_median_gbps']:.2f} | {c['ratio']:.3f} "
          f"| {vs_hostalloc} | {verdict} |")
print(f"WORST {worst:.3f}")
PY
)
  worst=$(sed -n 's/^WORST //p' <<<"$ratio_lines")
  ratio_lines=$(grep -v '^WORST ' <<<"$ratio_lines")
  if [[ -n "$worst" ]] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 0.97 else 1)" "$worst"; then
    step "pcieval vs reference" ok "worst ratio $worst (floor 0.97)"
  else
    step "pcieval vs reference" "FAIL" "worst ratio ${worst:-unknown} (floor 0.97)"
  fi
fi

# --- 4. The GPU test suite, one test at a time, with what is left of the
# budget: the numbers above are what the run exists for, so they come first.
tests_dir="$out_dir/test_gpu"
mkdir -p "$tests_dir"
per_test_timeout_s=60
passed=0 skipped=0 test_failed=0 timed_out=0 not_run=0
failed_names=()
skip_reasons=()
mapfile -t tests < <("$test_gpu" --gtest_list_tests 2>/dev/null | awk '
  /^[^ ]/ { suite = $1; next }
  /^  / { print suite $1 }')
if [[ -n "$preflight_failed" ]]; then
  tests=()
  step test_gpu "not run: preflight" "$preflight_failed"
elif ((${#tests[@]} == 0)); then
  step test_gpu "FAIL" "test_gpu lists no test"
fi
for name in "${tests[@]}"; do
  if (($(left_s) < 20)); then
    not_run=$((not_run + 1))
    continue
  fi
  log_file="$tests_dir/${name//\//_}.log"  # parameterized names hold slashes
  timeout --kill-after=5 "$per_test_timeout_s" "$test_gpu" --gtest_filter="$name" --gtest_brief=0 >"$log_file" 2>&1
  rc=$?
  cap "$log_file"
  if ((rc == 124 || rc == 137)); then
    timed_out=$((timed_out + 1))
    failed_names+=("$name (timed out after ${per_test_timeout_s} s)")
  elif ((rc != 0)); then
    test_failed=$((test_failed + 1))
    failed_names+=("$name")
  elif grep -q '\[  SKIPPED \]' "$log_file"; then
    skipped=$((skipped + 1))
    reason=$(grep -m1 -A1 'Skipped' "$log_file" | tail -1 | head -c 200)
    skip_reasons+=("$reason")
  else
    passed=$((passed + 1))
    rm -f "$log_file"  # a pass needs no log; failures and skips keep theirs
  fi
done
test_detail="${#tests[@]} tests: $passed passed, $skipped skipped, $test_failed failed, $timed_out timed out, $not_run not run (budget)"
if [[ -n "$preflight_failed" ]]; then
  :
elif ((test_failed + timed_out > 0)); then
  step test_gpu "FAIL" "$test_detail"
elif ((not_run > 0)); then
  # Not a failure: the budget went to the measurements first, by design.
  step test_gpu "incomplete" "$test_detail"
elif [[ -z "$gpu_listed" ]]; then
  step test_gpu "skipped: no GPU" "$test_detail"
else
  step test_gpu ok "$test_detail"
fi

# --- 5. The summary.
elapsed_s=$((SECONDS - started_s))
{
  echo "# pcieval gpu-check"
  echo
  echo "- host: $(hostname), $(date -u +%FT%TZ), $(grep -qw hypervisor /proc/cpuinfo && echo 'VM (hypervisor flag)' || echo 'no hypervisor flag')"
  echo "- pcieval: $(git -C "$source_dir" rev-parse --short HEAD 2>/dev/null || echo 'unknown commit'), build $build_dir"
  if [[ -n "$gpu_listed" ]]; then
    echo "- GPU: $gpu_listed listed by nvidia-smi (PCIEVAL_REQUIRE_GPU=1: a GPU test that skips fails)"
    sed 's/^/  - /' "$out_dir/nvidia-smi-L.txt"
  else
    echo "- GPU: **no GPU**: $no_gpu_reason; the GPU part is skipped"
  fi
  echo "- time: ${elapsed_s} s of a ${budget_s} s budget"
  echo
  echo "| step | status | detail |"
  echo "| --- | --- | --- |"
  printf '%s\n' "${steps[@]}"
  if [[ -n "$ratio_lines" ]]; then
    echo
    echo "## pcieval against the plain reference copy (same GPU, same run)"
    echo
    echo "Ratio: against the reference pinning as pcieval does (registered pages, same NUMA node), the 0.97"
    echo "floor; beside it, against cudaHostAlloc's buffer (with that reference's median GB/s)."
    echo
    echo "| probe | pcieval median GB/s | reference median GB/s (registered) | ratio | ratio to cudaHostAlloc | |"
    echo "| --- | --- | --- | --- | --- | --- |"
    echo "$ratio_lines"
  fi
  if ((${#failed_names[@]} > 0)); then
    echo
    echo "## GPU tests that failed (logs in test_gpu/)"
    echo
    printf -- '- %s\n' "${failed_names[@]}"
  fi
  if ((${#skip_reasons[@]} > 0)); then
    echo
    echo "## Why GPU tests skipped (distinct reasons)"
    echo
    printf '%s\n' "${skip_reasons[@]}" | sort | uniq -c | sort -rn | head -10 | sed -E 's/^ *([0-9]+) (.*)$/- \1 tests: \2/'
  fi
  if [[ -s "$out_dir/check.txt" ]]; then
    echo
    echo "## pcieval check --full (stdout)"
    echo
    echo '```'
    head -c 8000 "$out_dir/check.txt"
    echo '```'
  fi
  echo
  echo "Everything is in $(basename "$out_dir")/: summary.md, environment/, test_gpu/ (logs of failed and skipped tests),"
  echo "and, with a GPU, reference.json, results.json and check.txt. docs/measuring-on-a-gpu.md says how to read them."
} >"$out_dir/summary.md"
cat "$out_dir/summary.md"
exit "$failed"
