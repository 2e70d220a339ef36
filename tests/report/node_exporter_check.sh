#!/usr/bin/env bash
# Hands pcieval's Prometheus text to its real consumer: starts node_exporter
# (Debian's prometheus-node-exporter) on 127.0.0.1 with only the textfile
# collector, pointed at a temporary folder, drops the rendered sample there,
# scrapes /metrics and checks that node_exporter parsed the file
# (node_textfile_scrape_error 0) and serves every pcieval_ series of the file
# with its value, nothing more and nothing less. Then the same for a sample
# whose labels need escaping and UTF-8 repair.
#
#   node_exporter_check.sh RENDER_SAMPLE_REPORT
#
# Exit 0 when both pass, 1 on a mismatch, 77 (ctest's SKIP_RETURN_CODE) when
# node_exporter is not installed.
set -euo pipefail

render=${1:?usage: node_exporter_check.sh RENDER_SAMPLE_REPORT}
exporter=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [[ -z "$exporter" ]]; then
  echo "SKIP: node_exporter not found (Debian: apt-get install prometheus-node-exporter," \
    "or scripts/install-deps.sh --test)"
  exit 77
fi

work=$(mktemp -d)
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/textfile"

fail() {
  echo "FAIL: $*" >&2
  if [[ -f "$work/exporter.log" ]]; then
    echo "--- node_exporter log" >&2
    tail -n 20 "$work/exporter.log" >&2
  fi
  exit 1
}

# GET /metrics from 127.0.0.1:$port; curl when there is one, else bash's
# /dev/tcp (the body after the blank line that ends the headers).
scrape() {
  if command -v curl >/dev/null; then
    curl --silent --fail --max-time 5 "http://127.0.0.1:$port/metrics"
    return
  fi
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  sed '1,/^\r\{0,1\}$/d' <&3
  exec 3<&-
}

# Writes the sample like pcieval will: complete, then renamed into place, so
# the collector never reads half a file.
publish() {
  "$render" "$1" >"$work/textfile/.pcieval.prom.tmp"
  mv "$work/textfile/.pcieval.prom.tmp" "$work/textfile/pcieval.prom"
}

publish prom

# A free port: pick one, and pick again if node_exporter cannot listen on it.
for _ in 1 2 3 4 5 6 7 8 9 10; do
  port=$((20000 + RANDOM % 40000))
  "$exporter" --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$work/textfile" \
    --web.listen-address="127.0.0.1:$port" --web.disable-exporter-metrics \
    >"$work/exporter.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    if scrape >/dev/null 2>&1; then break 2; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
done
[[ -n "$pid" ]] || fail "node_exporter ($exporter) did not start"
echo "node_exporter $("$exporter" --version 2>&1 | head -n 1 | awk '{print $3}') on 127.0.0.1:$port"

# "series value" lines of the pcieval_ families, sorted. Empty labels are
# dropped: node_exporter adds bdf="" and kind="" to uplinks (it gives every
# series of a family the same label names), and Prometheus treats an empty
# label as an absent one.
series_of() {
  grep '^pcieval_' "$1" |
    sed -E -e ':drop' -e 's/([{,])[a-z_]+="",/\1/' -e 'tdrop' -e 's/,[a-z_]+=""\}/}/' -e 's/\{[a-z_]+=""\}//' |
    LC_ALL=C sort
}

# Every series of the file is served with an equal value (compared as
# numbers: node_exporter prints 1718000000.25 as 1.71800000025e+09), and no
# other pcieval_ series is.
compare() {
  local file=$1 scraped=$2
  series_of "$file" >"$work/expected"
  series_of "$scraped" >"$work/served"
  awk '
    function key(line) { return substr(line, 1, match(line, / [^ ]+$/) - 1) }
    function value(line) { return substr(line, match(line, / [^ ]+$/) + 1) }
    FNR == NR { want[key($0)] = value($0); next }
    {
      k = key($0)
      if (!(k in want)) { print "served but not in the file: " $0; bad = 1; next }
      if (value($0) + 0 != want[k] + 0) { print "value differs: " $0 " (file: " want[k] ")"; bad = 1 }
      delete want[k]
    }
    END {
      for (k in want) { print "in the file but not served: " k " " want[k]; bad = 1 }
      exit bad
    }' "$work/expected" "$work/served" || return 1
  echo "$(wc -l <"$work/served") pcieval_ series served as written"
}

check() {
  local mode=$1
  scrape >"$work/scrape.txt" || fail "$mode: scrape of 127.0.0.1:$port failed"
  grep -qx 'node_textfile_scrape_error 0' "$work/scrape.txt" ||
    fail "$mode: node_exporter could not parse the file: $(grep '^node_textfile_scrape_error' "$work/scrape.txt")"
  grep -q "^node_textfile_mtime_seconds{file=\"$work/textfile/pcieval.prom\"}" "$work/scrape.txt" ||
    fail "$mode: node_exporter did not read pcieval.prom"
  grep -qx 'pcieval_overall{result="fail"} 1' "$work/scrape.txt" || fail "$mode: pcieval_overall missing"
  compare "$work/textfile/pcieval.prom" "$work/scrape.txt" || fail "$mode: served series differ from the file"
  echo "$mode: node_textfile_scrape_error 0"
}

check prom
# And what the sample says: two GPUs, one of them trained at x8.
grep -qx 'pcieval_gpus_found 2' "$work/scrape.txt" || fail "prom: pcieval_gpus_found is not 2"
grep -qx 'pcieval_link_width_lanes{bdf="0000:17:00.0",kind="gpu",link_downstream="0000:17:00.0",link_upstream="0000:16:10.0",position="device_link",state="negotiated"} 8' \
  "$work/scrape.txt" || fail "prom: the x8 GPU link is not served"
# And the probe evidence: the x8 GPU's median (with its bdf) and the budget
# it is held against, the failed and skipped probes with all three statuses
# of each present. The host ceiling has no GPU: node_exporter serves bdf="".
grep -qx 'pcieval_bandwidth_gigabytes_per_second{aggregation="alone",bdf="0000:17:00.0",direction="h2d",host_memory="pinned",probe="h2d_ce",subject="0000:17:00.0"} 27.61' \
  "$work/scrape.txt" || fail "prom: the x8 GPU's h2d_ce median is not served"
grep -q '^pcieval_bandwidth_cv_ratio{aggregation="total_over_wall_time",bdf="",direction="h2h",host_memory="pinned",probe="host_ceiling",subject="numa0"} ' \
  "$work/scrape.txt" || fail "prom: the host ceiling's cv is not served"
grep -qx 'pcieval_bandwidth_budget_gigabytes_per_second{bdf="0000:17:00.0",direction="h2d",expected_link="Gen5 x16"} 58.4' \
  "$work/scrape.txt" || fail "prom: the x8 GPU's h2d budget is not served"
grep -qx 'pcieval_probe_status{probe="h2d_ce",status="failed"} 1' "$work/scrape.txt" ||
  fail "prom: the failed probe is not served"
grep -qx 'pcieval_probe_status{probe="group_ce",status="skipped"} 1' "$work/scrape.txt" ||
  fail "prom: the skipped probe is not served"
if grep -q '^pcieval_bandwidth_gigabytes_per_second{.*probe="sweep_ce"' "$work/scrape.txt"; then
  fail "prom: size sweep points are served as bandwidth series"
fi
# The collector rereads the folder on every scrape.
publish prom-hostile
check prom-hostile
grep -q '^pcieval_device_ok{bdf="dev \\"q\\" back\\\\slash\\nline' "$work/scrape.txt" ||
  fail "prom-hostile: escaped label value not served"
echo "PASS"
