#!/usr/bin/env bash
# The README's first command, `make run`, and what the README runs next:
#  - it builds the fixture machines too, since "A failing node" reads one
#    from build/fixtures right after it (make -n: what it would build);
#  - it ends with one line naming pcieval's exit code and its meaning, and a
#    verdict (pass, fail, inconclusive) is no make `Error`, while pcieval's
#    usage error is. Run on fixture machines through ARGS, with this build
#    folder; -o fixtures keeps make from building anything here (ctest may
#    run beside a build).
#   make_run_test.sh SOURCE_DIR BUILD_DIR FIXTURES_DIR
set -uo pipefail
source_dir=$1
build_dir=$2
fixtures=$3
command -v make >/dev/null || { echo "make not installed: skipped"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pcieval-make-run-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# What `make run` and `make demo` build, without building it.
for target in run demo; do
  make -n -C "$source_dir" "$target" BUILD_DIR="$build_dir" >"$work/dry" 2>&1 ||
    fail "make -n $target: $(cat "$work/dry")"
  grep -Eq -- '--target( [a-z_-]+)* pcieval_fixtures' "$work/dry" ||
    fail "make $target does not build the fixture machines (pcieval_fixtures): $(grep -F 'cmake --build' "$work/dry")"
done
grep -Fq 'build/fixtures/hgx_a100_8gpu_gpu_x8/sys' "$source_dir/README.md" ||
  fail "README's failing node no longer reads build/fixtures: update this test"

# make_run WANT_MAKE_STATUS WANT_LINE ARGS: make run's status and last line.
make_run() {
  local want_status=$1 want_line=$2 args=$3
  make -s -o fixtures -C "$source_dir" run BUILD_DIR="$build_dir" ARGS="$args" >"$work/out" 2>&1
  local got=$?
  # A failed recipe is followed by make's own `Error` line.
  local last
  last=$(grep '^make run:' "$work/out" | tail -n 1)
  if [[ $want_status == 0 && "$(tail -n 1 "$work/out")" != "$last" ]]; then
    fail "make run ARGS='$args': the exit code line is not the last: $(tail -n 2 "$work/out")"
  fi
  if [[ $want_status == 0 ]]; then
    [[ $got -eq 0 ]] || fail "make run ARGS='$args': make exited $got, want 0: $(tail -n 3 "$work/out")"
  else
    [[ $got -ne 0 ]] || fail "make run ARGS='$args': make exited 0, want a failure"
  fi
  [[ "$last" == "$want_line"* ]] || fail "make run ARGS='$args': last line '$last', want '$want_line...'"
  if [[ $want_status == 0 ]] && grep -q 'Error' "$work/out"; then
    fail "make run ARGS='$args': make reported an error: $(grep 'Error' "$work/out")"
  fi
}
machine() { echo "-q --sysfs-root $fixtures/$1/sys --topology-xml $fixtures/$1/topology.xml"; }
make_run 0 "make run: pcieval exited 0 (pass" "$(machine hgx_a100_8gpu_gen4)"
make_run 0 "make run: pcieval exited 1 (fail" "$(machine hgx_a100_8gpu_gpu_x8)"
make_run 0 "make run: pcieval exited 3 (inconclusive" "$(machine esc8000a_e12_idle_gen1)"
make_run 1 "make run: pcieval exited 2 (usage" "--no-such-flag"

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "make run: builds the fixtures, names pcieval's exit code, fails make on a usage error only"
