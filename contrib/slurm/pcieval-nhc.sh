#!/usr/bin/env bash
# Slurm health check with pcieval: drains this node, with the results' one-line
# summary as the reason, when its PCIe links fail. Use it as slurm.conf's
# HealthCheckProgram (the pcieval package installs it as
# /usr/libexec/pcieval/pcieval-nhc.sh), or from NHC through pcieval.nhc
# (--print-reason).
#
#   pcieval-nhc.sh [--results FILE [--max-age SECONDS]] [--with-probes]
#                  [--drain-inconclusive] [--print-reason] [-- PCIEVAL_ARGS...]
#
# By default it runs `pcieval check --no-probes` (reads and judges the links;
# copies nothing, so it is safe on a node running jobs). With --results FILE it
# judges that results document again (`pcieval validate`, e.g. the one the
# systemd timer writes) when it is at most --max-age seconds old (default
# 86400), and runs the live check otherwise. PCIEVAL_ARGS go to pcieval,
# check or validate alike: give flags both take (--expect-gpus 8, ...).
#
# pcieval's exit code decides, and is this script's exit code:
#   0 pass          nothing done
#   1 fail          drain the node: scontrol update nodename=NODE state=drain reason=SUMMARY
#                   (also when pcieval could not write an output, a full
#                   TMPDIR for one: the reason is then "pcieval exit 1 ...")
#   3 inconclusive  not drained (an idle GPU's lowered link speed under
#                   --no-probes is inconclusive, and draining every idle node
#                   would empty the cluster); --drain-inconclusive drains
#   2 usage/input   pcieval could not judge (missing binary, bad flag,
#                   unreadable results): logged, not drained, so a broken
#                   health check never drains the fleet
# A failing scontrol is exit 2. --print-reason prints the drain reason on
# stdout instead of calling scontrol (for NHC, which drains by itself).
#
# Environment: PCIEVAL (the binary, default pcieval), SCONTROL (default
# scontrol), SLURMD_NODENAME (default: hostname -s).
set -uo pipefail

pcieval=${PCIEVAL:-pcieval}
scontrol=${SCONTROL:-scontrol}
results=""
max_age_s=86400
with_probes=0
drain_inconclusive=0
print_reason=0

log() {
  echo "pcieval-nhc: $*" >&2
  if command -v logger >/dev/null 2>&1; then logger -t pcieval-nhc -- "$*" 2>/dev/null || true; fi
}

usage() {
  log "usage: pcieval-nhc.sh [--results FILE [--max-age SECONDS]] [--with-probes] [--drain-inconclusive] [--print-reason] [-- PCIEVAL_ARGS...]"
  exit 2
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --results) [[ $# -ge 2 ]] || usage; results=$2; shift 2 ;;
    --max-age) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage; max_age_s=$2; shift 2 ;;
    --with-probes) with_probes=1; shift ;;
    --drain-inconclusive) drain_inconclusive=1; shift ;;
    --print-reason) print_reason=1; shift ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
pcieval_args=("$@")

if ! command -v "$pcieval" >/dev/null 2>&1; then
  log "pcieval not found ($pcieval): node not judged"
  exit 2
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/pcieval-nhc.XXXXXX") || { log "cannot create a scratch folder"; exit 2; }
trap 'rm -rf "$scratch"' EXIT
document="$scratch/results.json"

# A results file young enough is judged again; anything else means a live check.
fresh_results() {
  [[ -n "$results" && -f "$results" ]] || return 1
  local now modified
  now=$(date +%s)
  modified=$(stat -c %Y -- "$results" 2>/dev/null) || return 1
  (( now - modified <= max_age_s ))
}

if fresh_results; then
  "$pcieval" validate "$results" -q -o "$document" "${pcieval_args[@]}" 2>"$scratch/stderr"
  rc=$?
  source_text="results $results"
else
  [[ -n "$results" ]] && log "results $results missing or older than ${max_age_s} s: running the live check"
  probes=(--no-probes)
  [[ $with_probes -eq 1 ]] && probes=()
  "$pcieval" check "${probes[@]}" -q -o "$document" "${pcieval_args[@]}" 2>"$scratch/stderr"
  rc=$?
  source_text="live check"
fi

# The document's "summary" (report/results_writer.hpp: pretty-printed, 2-space indent,
# so the top-level key starts its own line). JSON escapes of quotes and
# backslashes are undone; the reason stays one line.
summary_of() {
  local line
  line=$(sed -n 's/^  "summary": "\(.*\)",\{0,1\}$/\1/p' "$1" 2>/dev/null | head -n 1)
  line=${line//\\\"/\"}
  line=${line//\\\\/\\}
  printf '%s' "$line" | tr -d '\r\n' | cut -c 1-240
}

drain() {
  local reason
  reason=$(summary_of "$document")
  [[ -n "$reason" ]] || reason="pcieval exit $rc from the $source_text (no summary)"
  if [[ $print_reason -eq 1 ]]; then
    printf '%s\n' "$reason"
    return 0
  fi
  local node=${SLURMD_NODENAME:-$(hostname -s)}
  if ! "$scontrol" update nodename="$node" state=drain reason="$reason"; then
    log "scontrol could not drain $node (reason was: $reason)"
    exit 2
  fi
  log "drained $node: $reason"
}

case $rc in
  0) ;;
  1) drain ;;
  3)
    if [[ $drain_inconclusive -eq 1 ]]; then
      drain
    else
      log "inconclusive, not drained: $(summary_of "$document")"
    fi
    ;;
  *)
    log "pcieval could not judge this node (exit $rc, $source_text): $(head -c 400 "$scratch/stderr" | tr '\n' ' ')"
    rc=2
    ;;
esac
exit "$rc"
