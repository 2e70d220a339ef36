#!/usr/bin/env bash
# contrib/slurm/pcieval-nhc.sh and pcieval.nhc against fixture machines, with
# a fake scontrol on PATH that records how it was called: a failing machine is
# drained with the summary of its results document, a passing one is not, an
# inconclusive one only with --drain-inconclusive, and a pcieval that cannot
# judge never drains.
#   nhc_test.sh PCIEVAL_BINARY FIXTURES_DIR SOURCE_DIR
set -uo pipefail

pcieval=$1
fixtures=$2
source_dir=$3
script="$source_dir/contrib/slurm/pcieval-nhc.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/pcieval-nhc-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat >"$work/bin/scontrol" <<'FAKE'
#!/usr/bin/env bash
# Records one line per call: the arguments, each in brackets.
printf '[%s]' "$@" >>"$SCONTROL_LOG"
printf '\n' >>"$SCONTROL_LOG"
exit "${SCONTROL_EXIT:-0}"
FAKE
chmod +x "$work/bin/scontrol"
export PATH="$work/bin:$PATH" PCIEVAL="$pcieval" SLURMD_NODENAME=gpu-node-07 SCONTROL_LOG="$work/scontrol.log"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Machine "-" gives no arguments (a results file is judged with `validate`,
# which reads no tree).
machine_args() {
  [[ "$1" == "-" ]] && return 0
  printf '%s\n' --sysfs-root "$fixtures/$1/sys" --topology-xml "$fixtures/$1/topology.xml"
}

# The summary as pcieval writes it, read with a JSON parser, not the script's sed.
summary_of_machine() {
  local json="$work/$1.json"
  mapfile -t args < <(machine_args "$1")
  "$pcieval" check "${args[@]}" --no-probes -q -o "$json" >/dev/null 2>&1
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"])' "$json"
}

# run_nhc EXPECTED_EXIT MACHINE [SCRIPT_ARGS...]: runs the script on MACHINE's
# fixture and checks its exit code; scontrol's calls are left in the log.
run_nhc() {
  local want=$1 machine=$2
  shift 2
  : >"$SCONTROL_LOG"
  mapfile -t args < <(machine_args "$machine")
  "$script" "$@" -- "${args[@]}" >"$work/stdout" 2>"$work/stderr"
  local got=$?
  [[ $got -eq $want ]] || fail "$machine $*: exit $got, want $want; stderr: $(cat "$work/stderr")"
}

expect_drained_with() {
  local want="[update][nodename=gpu-node-07][state=drain][reason=$1]"
  local got
  got=$(cat "$SCONTROL_LOG")
  [[ "$got" == "$want" ]] || fail "$2: scontrol called as '$got', want '$want'"
}

expect_not_drained() {
  [[ ! -s "$SCONTROL_LOG" ]] || fail "$1: scontrol was called: $(cat "$SCONTROL_LOG")"
}

# A GPU trained at x8 (HGX A100): drained with the summary.
failing_summary=$(summary_of_machine hgx_a100_8gpu_gpu_x8)
[[ "$failing_summary" == "pcieval fail: "* ]] || fail "fixture summary is not a failure: $failing_summary"
run_nhc 1 hgx_a100_8gpu_gpu_x8
expect_drained_with "$failing_summary" "failing machine"
grep -q "drained gpu-node-07" "$work/stderr" || fail "the drain was not logged"

# The same machine healthy: nothing happens.
run_nhc 0 hgx_a100_8gpu_gen4
expect_not_drained "passing machine"

# Idle GPUs read without load are inconclusive: not drained unless asked.
idle_summary=$(summary_of_machine esc8000a_e12_idle_gen1)
run_nhc 3 esc8000a_e12_idle_gen1
expect_not_drained "inconclusive machine"
run_nhc 3 esc8000a_e12_idle_gen1 --drain-inconclusive
expect_drained_with "$idle_summary" "inconclusive machine with --drain-inconclusive"

# --print-reason: the reason on stdout, scontrol untouched (for NHC).
run_nhc 1 hgx_a100_8gpu_gpu_x8 --print-reason
expect_not_drained "--print-reason"
[[ "$(cat "$work/stdout")" == "$failing_summary" ]] || fail "--print-reason printed '$(cat "$work/stdout")'"

# A recent results file is judged again; a stale one falls back to the live check.
cp "$work/hgx_a100_8gpu_gpu_x8.json" "$work/recent.json"
run_nhc 1 - --results "$work/recent.json"
expect_drained_with "$failing_summary" "recent failing results file"
touch -d '2 days ago' "$work/recent.json"
run_nhc 0 hgx_a100_8gpu_gen4 --results "$work/recent.json" --max-age 3600
expect_not_drained "stale results file, passing live check"

# pcieval cannot judge (unreadable results, missing binary, bad flag): exit 2, no drain.
echo 'not json' >"$work/broken.json"
run_nhc 2 - --results "$work/broken.json"
expect_not_drained "malformed results file"
PCIEVAL="$work/no-such-pcieval" run_nhc 2 hgx_a100_8gpu_gpu_x8
expect_not_drained "missing pcieval"
run_nhc 2 hgx_a100_8gpu_gpu_x8 --no-such-flag
expect_not_drained "bad flag"

# scontrol failing is reported, not ignored.
SCONTROL_EXIT=1 run_nhc 2 hgx_a100_8gpu_gpu_x8
grep -q "could not drain" "$work/stderr" || fail "a failing scontrol was not reported"

# The NHC check function: `die` gets the summary on a failing machine only.
nhc_check() {
  local machine=$1
  mapfile -t args < <(machine_args "$machine")
  (
    died=""
    # shellcheck disable=SC2317  # called by check_pcieval
    die() { died="$2"; }
    # shellcheck disable=SC2317
    log() { :; }
    export PCIEVAL_NHC_SCRIPT="$script"
    # shellcheck source=/dev/null
    source "$source_dir/contrib/slurm/pcieval.nhc"
    check_pcieval -- "${args[@]}" 2>/dev/null
    printf '%s' "$died"
  )
}
[[ "$(nhc_check hgx_a100_8gpu_gpu_x8)" == "$failing_summary" ]] || fail "NHC check did not die with the summary"
[[ -z "$(nhc_check hgx_a100_8gpu_gen4)" ]] || fail "NHC check died on a passing machine"
[[ -z "$(nhc_check esc8000a_e12_idle_gen1)" ]] || fail "NHC check died on an inconclusive machine"

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "pcieval-nhc.sh and pcieval.nhc: all cases pass"
