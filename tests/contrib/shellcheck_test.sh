#!/usr/bin/env bash
# Runs shellcheck on every shell piece of contrib/, on these tests, on
# tests/package's and tests/docs', and on packaging/debian's maintainer
# scripts (skipped, exit 77, when shellcheck is not installed:
# scripts/install-deps.sh --test).
# Usage: shellcheck_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
command -v shellcheck >/dev/null || { echo "shellcheck not installed: skipped"; exit 77; }
mapfile -t scripts < <(find "$source_dir/contrib" "$source_dir/tests/contrib" "$source_dir/tests/package" \
  "$source_dir/tests/docs" -type f \( -name '*.sh' -o -name '*.nhc' \) | sort)
[[ ${#scripts[@]} -gt 0 ]] || { echo "no scripts found under $source_dir/contrib" >&2; exit 1; }
# NHC check files are sourced by NHC's bash, without a shebang.
shellcheck --shell=bash --severity=info "${scripts[@]}"
# The Debian maintainer scripts run under dpkg's /bin/sh, not bash.
maintainer_scripts=("$source_dir"/packaging/debian/*)
shellcheck --shell=sh --severity=info "${maintainer_scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts and ${#maintainer_scripts[@]} maintainer scripts clean"
