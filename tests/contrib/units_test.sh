#!/usr/bin/env bash
# The systemd units and the Kubernetes Job of contrib/: the command line each
# runs is run for real (on a fixture machine, outputs in a scratch folder) and
# must pass and write its results, metrics and history; the units must pass
# `systemd-analyze verify` with no warning (skipped when it is absent).
#   units_test.sh PCIEVAL_BINARY FIXTURES_DIR SOURCE_DIR
set -uo pipefail
pcieval=$1
fixtures=$2
source_dir=$3
machine=hgx_a100_8gpu_gen4  # passes, eight GPUs as the Job expects
fixture_args=(--sysfs-root "$fixtures/$machine/sys" --topology-xml "$fixtures/$machine/topology.xml")

work=$(mktemp -d "${TMPDIR:-/tmp}/pcieval-units-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Runs a command line given as words, then checks what it wrote under $1.
check_outputs() {
  local label=$1 results=$2 prom=$3 history=$4
  [[ -s "$results" ]] || fail "$label: no results document at $results"
  grep -q '^pcieval_' "$prom" 2>/dev/null || fail "$label: no pcieval_ metrics in $prom"
  local runs
  runs=$("$pcieval" history --db "$history" --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]))')
  [[ "$runs" == 1 ]] || fail "$label: history holds '$runs' runs, want 1"
}

# systemd: ExecStart= with its continuation lines joined, run as the unit
# would run it: the packaged paths pointed at this tree and a scratch folder,
# STATE_DIRECTORY set as StateDirectory= sets it. Twice: with node_exporter's
# textfile folder, and without it (prometheus-node-exporter is only
# suggested), where the results and the history must still be written.
service="$source_dir/contrib/systemd/pcieval-check.service"
exec_start=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$service" | sed -n 's/^ExecStart=//p')
[[ -n "$exec_start" ]] || fail "no ExecStart in $service"
run_service() {
  local label=$1 textfile=$2 state=$3 line=$exec_start
  mkdir -p "$state"
  line=${line//\/usr\/bin\/pcieval/$pcieval}
  line=${line//\/usr\/libexec\/pcieval/$source_dir\/contrib\/systemd}
  line=${line//\/var\/lib\/prometheus\/node-exporter/$textfile}
  line=${line//\/var\/lib\/pcieval/$state}
  read -r -a words <<<"$line"
  PCIEVAL=$pcieval STATE_DIRECTORY=$state PCIEVAL_TEXTFILE_DIR=$textfile \
    "${words[@]}" "${fixture_args[@]}" >"$work/out" 2>"$work/err"
  local rc=$?
  [[ $rc -eq 0 ]] || fail "$label: service ExecStart exit $rc: $(cat "$work/err")"
}
mkdir -p "$work/systemd/prom"
run_service service "$work/systemd/prom" "$work/systemd/state"
check_outputs service "$work/systemd/state/last-results.json" "$work/systemd/prom/pcieval.prom" \
  "$work/systemd/state/history.sqlite"

run_service "service without node_exporter" "$work/no-exporter/prom" "$work/no-exporter/state"
[[ ! -e "$work/no-exporter/prom" ]] || fail "service without node_exporter: created $work/no-exporter/prom"
[[ -s "$work/no-exporter/state/last-results.json" ]] ||
  fail "service without node_exporter: no results document: $(cat "$work/err")"
runs=$("$pcieval" history --db "$work/no-exporter/state/history.sqlite" --json 2>/dev/null |
  python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]))' 2>/dev/null)
[[ "$runs" == 1 ]] || fail "service without node_exporter: history holds '$runs' runs, want 1"
grep -q 'metrics not written' "$work/err" ||
  fail "service without node_exporter: nothing on stderr says the metrics were not written: $(cat "$work/err")"

# Kubernetes: the container's command and args, /out being the hostPath.
mkdir -p "$work/k8s"
mapfile -t words < <(python3 - "$source_dir/contrib/k8s/pcieval-job.yaml" "$pcieval" "$work/k8s" <<'PY'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
assert job["kind"] == "Job", job["kind"]
pod = job["spec"]["template"]["spec"]
assert pod["restartPolicy"] == "Never"
container = pod["containers"][0]
assert container["resources"]["limits"]["nvidia.com/gpu"] >= 1
assert any(v["name"] == "out" and "hostPath" in v for v in pod["volumes"])
words = [sys.argv[2] if w == "/usr/bin/pcieval" else w for w in container["command"]]
words += [a.replace("/out", sys.argv[3]) for a in container["args"]]
print("\n".join(words))
PY
)
[[ ${#words[@]} -gt 1 ]] || fail "could not read the Job's command"
"${words[@]}" "${fixture_args[@]}" >"$work/out" 2>"$work/err"
rc=$?
[[ $rc -eq 0 ]] || fail "Job command exit $rc: $(cat "$work/err")"
check_outputs job "$work/k8s/results.json" "$work/k8s/pcieval.prom" "$work/k8s/history.sqlite"

# systemd-analyze verify needs ExecStart's program to exist: point it at ours.
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$work/units"
  sed -e "s#/usr/bin/pcieval#$pcieval#" -e "s#/usr/libexec/pcieval#$source_dir/contrib/systemd#" "$service" \
    >"$work/units/pcieval-check.service"
  cp "$source_dir/contrib/systemd/pcieval-check.timer" "$work/units/"
  if ! systemd-analyze verify --man=no "$work/units/pcieval-check.service" "$work/units/pcieval-check.timer" \
      >"$work/verify" 2>&1 || [[ -s "$work/verify" ]]; then
    fail "systemd-analyze verify: $(cat "$work/verify")"
  fi
else
  echo "systemd-analyze not installed: unit verification skipped"
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "systemd units and Kubernetes Job: all checks pass"
