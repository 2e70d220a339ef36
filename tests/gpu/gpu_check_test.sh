#!/usr/bin/env bash
# make gpu-check on a machine without a GPU (issue 17): against an already
# built tree (-b), it runs end to end in under a minute, exits 0, says "no
# GPU" with the reason, skips the GPU part, and leaves an output folder under
# 5 MiB. On a machine where nvidia-smi lists a GPU the script would measure
# for minutes: 77 (skipped), since that run is what it is for.
#
#   gpu_check_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1
build_dir=$2
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "a GPU is listed: run make gpu-check itself"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out/summary.md" 2>/dev/null; exit 1; }

started=$SECONDS
rc=0
OUT="$out" "$source_dir/scripts/gpu-check.sh" -b "$build_dir" >"$out.stdout" 2>"$out.stderr" || rc=$?
elapsed=$((SECONDS - started))
cat "$out.stderr"
rm -f "$out.stdout" "$out.stderr"
((rc == 0)) || fail "exit $rc, want 0 without a GPU"
((elapsed < 60)) || fail "took ${elapsed} s, want under 60"
[[ -s "$out/summary.md" ]] || fail "no summary.md in \$OUT"
grep -q -- '- GPU: \*\*no GPU\*\*: ' "$out/summary.md" || fail "the summary does not say no GPU with the reason"
grep -q '^| test_gpu | skipped: no GPU | ' "$out/summary.md" || fail "test_gpu not reported as skipped"
grep -Eq '^\| test_gpu \| [^|]*\| [0-9]+ tests: [0-9]+ passed, [1-9][0-9]* skipped, 0 failed, 0 timed out, 0 not run' \
  "$out/summary.md" || fail "the GPU tests did not all skip cleanly"
grep -q '^| pcieval check --full | skipped: no GPU | ' "$out/summary.md" || fail "check not reported as skipped"
grep -q '^| environment | ok | ' "$out/summary.md" || fail "no environment capture"
# The preflight comes first, and says which CUDA driver it found (none here)
# without failing a machine that has no GPU.
sed -n '/^| --- | --- | --- |$/{n;p;q}' "$out/summary.md" | grep -q '^| preflight | ok | CUDA driver: ' ||
  fail "the summary's first step is not the preflight naming the CUDA driver"
[[ -s "$out/environment/host.txt" ]] || fail "environment/host.txt missing"
grep -q '^## Why GPU tests skipped' "$out/summary.md" || fail "the skip reasons are not given"
# A simulated node is refused: gpu-check measures hardware only.
sim_rc=0
PCIEVAL_SIMULATE=scenario.json "$source_dir/scripts/gpu-check.sh" -b "$build_dir" >/dev/null 2>"$out.sim" || sim_rc=$?
((sim_rc == 2)) || fail "with PCIEVAL_SIMULATE set gpu-check exited $sim_rc, want 2"
grep -q 'PCIEVAL_SIMULATE is set' "$out.sim" || fail "the refusal does not name PCIEVAL_SIMULATE"
rm -f "$out.sim"
size=$(du -sb "$out" | cut -f1)
((size < 5 * 1024 * 1024)) || fail "output folder is $size bytes, want under 5 MiB"
echo "ok: no GPU reported in ${elapsed} s, exit 0, output folder $size bytes"
