#!/usr/bin/env bash
# With PCIEVAL_REQUIRE_GPU=1 on a machine without a usable GPU, a GPU test
# must fail with the reason instead of skipping (gpu_test_util.hpp). Where a
# GPU is usable the test would run and pass, which proves nothing here: 77.
#
#   require_gpu_test.sh TEST_GPU_BINARY
set -euo pipefail
test_gpu=$1
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "a GPU is listed by nvidia-smi: the skip-to-failure rule is checked on machines without one"
  exit 77
fi
filter='DeadlineOnGpu.StagedCopiesRoundTripWithinTheirDeadline'
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Without the variable: skipped, exit 0.
"$test_gpu" --gtest_filter="$filter" >"$out" 2>&1 || { cat "$out"; echo "FAIL: without PCIEVAL_REQUIRE_GPU the test must skip, not fail"; exit 1; }
grep -q '\[  SKIPPED \]' "$out" || { cat "$out"; echo "FAIL: expected a skip"; exit 1; }
# With it: a failure that says why.
if PCIEVAL_REQUIRE_GPU=1 "$test_gpu" --gtest_filter="$filter" >"$out" 2>&1; then
  cat "$out"; echo "FAIL: with PCIEVAL_REQUIRE_GPU=1 and no GPU the test passed"; exit 1
fi
grep -q 'PCIEVAL_REQUIRE_GPU is set, so this GPU test fails instead of skipping: ' "$out" ||
  { cat "$out"; echo "FAIL: the failure does not give the reason"; exit 1; }
grep -q '\[  FAILED  \]' "$out" || { cat "$out"; echo "FAIL: expected a failed test"; exit 1; }
echo "ok: skips without PCIEVAL_REQUIRE_GPU, fails with the reason with it"
