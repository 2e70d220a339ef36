#!/usr/bin/env bash
# The fuzz campaign of the ingest/ parsers (`make fuzz`): builds the libFuzzer
# harnesses of tests/fuzz/ with clang, ASan and UBSan, runs each for RUNS
# executions (one harness at a time, one core), seeded with the committed
# corpus (tests/fuzz/corpus/<harness>/) and the capture fixtures, then merges
# what it found into that corpus, minimised (-merge=1 into an empty folder),
# ready to commit. `make test` only replays that corpus (fuzz.replay.*, built
# by the normal build): no clang, seconds.
#
# Exit 0: no finding; 1: a harness crashed, leaked, hung, ran out of memory or
# tripped a sanitizer (the input is saved in the findings folder and the
# corpus is left as it was); 77: skipped, clang or its libFuzzer runtime is
# missing. Ctrl-C (or SIGINT to the harness) ends the harness running now,
# merges what it found and ends the campaign there.
#
#   tests/fuzz/run_fuzz.sh [-b BUILD_DIR] [-r RUNS] [-t SECONDS] [-l MAX_LEN] [-o FINDINGS_DIR] [-n] [HARNESS...]
#
#   -r  executions per harness (default 10,000,000)
#   -t  wall-clock cap per harness, seconds (default 0: none)
#   -l  longest input, bytes (default 4096: see below)
#   -n  do not merge into tests/fuzz/corpus (a run that only looks for findings)
#   HARNESS  e.g. fuzz_lspci or lspci; default every fuzz_*.cpp
#
# Settings, and why:
# - ASan + UBSan stay on, every finding aborting (-fno-sanitize-recover): an
#   out-of-bounds read in a parser of pasted text is the bug class worth the
#   campaign, and without ASan it only shows when it happens to crash.
#   They cost about 2x in exec/s; a campaign that is twice as long is cheaper
#   than a memory bug that reads as a wrong verdict.
# - -max_len=4096, not the fixtures' size (up to 40 KB; the old round used
#   262144): every parser is line-based and keeps little state across lines,
#   so what a 40 KB capture reaches, a 4 KB slice of it reaches too (an lspci
#   -vv device block is 1-3 KB, an nvidia-smi GPU section under 4 KB). Run
#   time grows with length, and libFuzzer's mutations spend most of their
#   executions on the longest inputs. Measured on the shared 2-core build
#   machine, 8 s per harness: 350-7,000 exec/s at 4096 (nvidia_smi_xml
#   6,000/s over a whole 10M run) against 300-4,900 at 262144, with the
#   inputs it keeps 4 KB at most instead of whole captures. The capture
#   fixtures themselves are replayed whole by fuzz.replay.* in every
#   `make test`. Campaign numbers: tests/fuzz/corpus/README.md.
# - -timeout=10 s per input and -rss_limit_mb=2048: a parser that hangs or
#   balloons on some input is a finding too; detect_leaks=1 makes a leak one.
# - The merge reads every input at most max_len bytes long and writes the
#   smallest set that reaches every edge the fixtures do not (see below):
#   the committed corpus stays at tens to a few hundred KB per harness.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=$root/build/fuzz
runs=10000000
seconds=0
max_len=4096
findings=""
merge=1
while getopts "b:r:t:l:o:nh" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    r) runs=$OPTARG ;;
    t) seconds=$OPTARG ;;
    l) max_len=$OPTARG ;;
    o) findings=$OPTARG ;;
    n) merge=0 ;;
    *) sed -n '2,23p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
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

mkdir -p "$build_dir"
cmake -S "$here" -B "$build_dir" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build_dir.configure.log" 2>&1 ||
  { cat "$build_dir.configure.log"; exit 1; }
cmake --build "$build_dir" -j "${FUZZ_JOBS:-2}" >"$build_dir.build.log" 2>&1 || { tail -40 "$build_dir.build.log"; exit 1; }

harnesses=()
if [[ $# -eq 0 ]]; then
  for source in "$here"/fuzz_*.cpp; do harnesses+=("$(basename "$source" .cpp)"); done
else
  for name in "$@"; do harnesses+=("fuzz_${name#fuzz_}"); done
fi

mkdir -p "$findings"
seeds=$root/tests/fixtures/captures
status=0
printf '%-20s %11s %7s %6s %7s %9s  %s\n' harness executions exec/s cov corpus bytes result
for name in "${harnesses[@]}"; do
  harness=$build_dir/$name
  [[ -x "$harness" ]] || { echo "$name: no such harness in $build_dir"; status=1; continue; }
  committed=$here/corpus/$name
  mkdir -p "$committed"
  # New inputs go to the first folder, a scratch one: the committed corpus
  # and the fixtures are only read, and change by the merge below.
  scratch=$build_dir/corpus/$name
  mkdir -p "$scratch"
  log=$build_dir/$name.log
  limits=(-runs="$runs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048)
  [[ "$seconds" != 0 ]] && limits+=(-max_total_time="$seconds")
  rc=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$harness" "${limits[@]}" -print_final_stats=1 \
    -artifact_prefix="$findings/$name-" "$scratch" "$committed" "$seeds" >"$log" 2>&1 || rc=$?
  case $rc in
    0) result=ok ;;
    # libFuzzer's exit on SIGINT or SIGTERM (Ctrl-C): no finding, and what
    # it found so far is merged; the campaign stops after this harness.
    72) result=interrupted ;;
    *) result="FINDING (see $log and $findings)" status=1 ;;
  esac
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  if [[ ($result == ok || $result == interrupted) && $merge == 1 ]]; then
    # The merge starts from the fixtures, so an input is kept only for an
    # edge that they (replayed whole by fuzz.replay.*) do not reach, and
    # counts edges, not hit counts (-use_counters=0): one input per new edge,
    # the smallest, keeps the corpus at tens of inputs, not thousands.
    merged=$build_dir/merged/$name
    rm -rf "$merged" && mkdir -p "$merged"
    for seed in "$seeds"/*; do cp "$seed" "$merged/seed-$(basename "$seed")"; done
    if "$harness" -merge=1 -use_counters=0 -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        "$merged" "$committed" "$scratch" >"$build_dir/$name.merge.log" 2>&1; then
      rm -f "$merged"/seed-*
      find "$committed" -mindepth 1 -delete
      cp "$merged"/* "$committed"/ 2>/dev/null || true
    else
      result="MERGE FAILED (see $build_dir/$name.merge.log)"
      status=1
    fi
  fi
  files=$(find "$committed" -type f | wc -l)
  bytes=$(find "$committed" -type f -printf "%s\n" | awk "{s += \$1} END {print s + 0}")
  printf '%-20s %11s %7s %6s %7s %9s  %s\n' "$name" "${executions:-?}" "${rate:-?}" "${cov:-?}" "$files" "$bytes" "$result"
  if [[ "$result" == FINDING* ]]; then grep -m5 -E "ERROR|SUMMARY|runtime error" "$log" || true; fi
  [[ "$result" == interrupted ]] && break
done
echo "runs per harness: $runs, max_len $max_len; findings: $([[ $status -eq 0 ]] && echo none || echo "$findings")"
exit $status
