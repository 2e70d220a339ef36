#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the ingest/ parsers (tests/fuzz/, clang
# with ASan and UBSan) and runs each for a while, seeded with the capture
# fixtures. `make test` runs a short round through ctest; `make fuzz` a long
# one. Exit 0: no finding; 1: a harness crashed, leaked, hung or tripped a
# sanitizer (the input is saved in the findings directory); 77: skipped
# because clang or its libFuzzer runtime is missing (ctest reports SKIP).
#
#   tests/fuzz/run_fuzz.sh [-b BUILD_DIR] [-t SECONDS_PER_HARNESS] [-o FINDINGS_DIR]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=$root/build/fuzz
seconds=3
findings=""
while getopts "b:t:o:h" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    t) seconds=$OPTARG ;;
    o) findings=$OPTARG ;;
    *) sed -n '2,10p' "$0"; exit 2 ;;
  esac
done
findings=${findings:-$build_dir/findings}

cxx=${FUZZ_CXX:-}
if [[ -z "$cxx" ]]; then
  for candidate in clang++-14 clang++; do
    if command -v "$candidate" >/dev/null; then cxx=$(command -v "$candidate"); break; fi
  done
fi
if [[ -z "$cxx" ]]; then
  echo "SKIP: no clang++ (install clang-14 and libclang-rt-14-dev: scripts/install-deps.sh --test)"
  exit 77
fi
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe_dir/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe_dir/p.cpp" -o "$probe_dir/p" 2>"$probe_dir/err"; then
  echo "SKIP: $cxx cannot link libFuzzer with ASan/UBSan (install libclang-rt-14-dev): $(head -1 "$probe_dir/err")"
  exit 77
fi

cmake -S "$here" -B "$build_dir" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build_dir.configure.log" 2>&1 ||
  { cat "$build_dir.configure.log"; exit 1; }
cmake --build "$build_dir" -j "${FUZZ_JOBS:-2}" >"$build_dir.build.log" 2>&1 || { tail -40 "$build_dir.build.log"; exit 1; }

mkdir -p "$findings"
seeds=$root/tests/fixtures/captures
status=0
total=0
printf '%-22s %12s %10s  %s\n' harness executions exec/s result
for harness in "$build_dir"/fuzz_*; do
  [[ -x "$harness" && -f "$harness" ]] || continue
  name=$(basename "$harness")
  # New inputs go to the first directory, a scratch one: the fixtures stay as written.
  corpus="$build_dir/corpus/$name"
  mkdir -p "$corpus"
  log="$build_dir/$name.log"
  # detect_leaks: a parser that leaks on some input is a finding too.
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$harness" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 -artifact_prefix="$findings/$name-" \
      "$corpus" "$seeds" >"$log" 2>&1; then
    result=ok
  else
    result="FINDING (see $log and $findings)"
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  total=$((total + ${runs:-0}))
  printf '%-22s %12s %10s  %s\n' "$name" "${runs:-?}" "${rate:-?}" "$result"
  if [[ $status -ne 0 && "$result" != ok ]]; then grep -m5 -E "ERROR|SUMMARY|runtime error" "$log" || true; fi
done
echo "total executions: $total in ${seconds}s per harness; findings: $([[ $status -eq 0 ]] && echo none || echo "$findings")"
exit $status
