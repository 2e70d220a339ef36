#!/usr/bin/env bash
# Runs shellcheck on every shell piece of contrib/, on these tests and on
# tests/package's (skipped, exit 77, when shellcheck is not installed:
# scripts/install-deps.sh --test).
# Usage: shellcheck_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
command -v shellcheck >/dev/null || { echo "shellcheck not installed: skipped"; exit 77; }
mapfile -t scripts < <(find "$source_dir/contrib" "$source_dir/tests/contrib" "$source_dir/tests/package" -type f \( -name '*.sh' -o -name '*.nhc' \) | sort)
[[ ${#scripts[@]} -gt 0 ]] || { echo "no scripts found under $source_dir/contrib" >&2; exit 1; }
# NHC check files are sourced by NHC's bash, without a shebang.
shellcheck --shell=bash --severity=info "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts clean"
