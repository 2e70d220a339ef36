#!/usr/bin/env bash
# `pcieval diagnose` on a 100 MB kernel log against `grep -cE` of the same
# patterns over the same file, in paired runs (see below): the aim is
# diagnose's wall time at or below grep's (ratio <= 1), and the script fails
# when the parser reads the log less than half as fast as grep scans it (CPU
# time ratio > 2). The log is
# synthetic, generated here: ordinary boot and runtime lines of a GPU node
# (USB, NVMe, EXT4, systemd, NVRM, network) modelled on real dmesg output,
# with about one line in 200 a PCIe event of the kinds pcieval reads ("limited
# by" bandwidth lines, AER corrected and uncorrected errors, Surprise Down,
# bandwidth notifications, Xid 79 and Xid 74/119 that are not bus events).
#
#   bench/perf/diagnose_vs_grep.sh [-b BUILD_DIR] [-p PCIEVAL] [-c BASELINE] [-s MEGABYTES] [-r ROUNDS]
#
# -p runs another pcieval binary (a build of an older commit, to compare).
# -c runs BASELINE (another pcieval binary) in the same rounds as well, and
#    gives each run of PCIEVAL divided by BASELINE's of the same round: a
#    before/after on a shared machine, under the same load.
set -euo pipefail

build_dir=build
megabytes=100
repetitions=9
pcieval=
baseline=
while getopts "b:p:c:s:r:h" opt; do
  case "$opt" in
    b) build_dir=$OPTARG ;;
    p) pcieval=$OPTARG ;;
    c) baseline=$OPTARG ;;
    s) megabytes=$OPTARG ;;
    r) repetitions=$OPTARG ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
pcieval=${pcieval:-$build_dir/pcieval}
if [[ ! -x "$pcieval" ]]; then
  echo "error: $pcieval not built (make build)" >&2
  exit 2
fi
if [[ -n "$baseline" && ! -x "$baseline" ]]; then
  echo "error: $baseline is not an executable" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$work/kern.log"

python3 - "$log" "$megabytes" <<'PY'
import random, sys
path, megabytes = sys.argv[1], int(sys.argv[2])
random.seed(2026)
ordinary = [
    "usb 1-{a}: new high-speed USB device number {n} using xhci_hcd",
    "usb 1-{a}: New USB device found, idVendor=046b, idProduct=ff10, bcdDevice= 1.00",
    "nvme nvme{a}: 64/0/0 default/read/poll queues",
    "EXT4-fs (nvme0n1p{a}): mounted filesystem with ordered data mode. Quota mode: none.",
    "systemd[1]: Started session-{n}.scope - Session {n} of User slurm.",
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
    "nvidia-nvswitch{a}: open (major={n})",
    "mlx5_core 0000:{b:02x}:00.0: mlx5_pcie_event:301:(pid {n}): PCIe slot advertised sufficient power (27W).",
    "IPv6: ADDRCONF(NETDEV_CHANGE): ib{a}: link becomes ready",
    "audit: type=1400 audit({n}.123:{a}): apparmor=\"STATUS\" operation=\"profile_load\" name=\"nvidia_modprobe\"",
    "pci 0000:{b:02x}:00.0: [10de:2330] type 00 class 0x030200",
    "pci 0000:{b:02x}:00.0: BAR 0: assigned [mem 0x{n:x}000000-0x{n:x}ffffff 64bit pref]",
    "perf: interrupt took too long ({n} > 2500), lowering kernel.perf_event_max_sample_rate to {a}000",
]
events = [
    "pci 0000:{b:02x}:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:{p:02x}:01.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)",
    "pcieport 0000:{p:02x}:01.0: AER: Corrected error received: 0000:{b:02x}:00.0",
    "nvidia 0000:{b:02x}:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
    "nvidia 0000:{b:02x}:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)",
    "pcieport 0000:{p:02x}:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)",
    "pcieport 0000:{p:02x}:01.0:    [ 5] SDES                   (First)",
    "pcieport 0000:{p:02x}:01.0: bwctrl: Link Bandwidth Notification: link speed changed",
    "NVRM: Xid (PCI:0000:{b:02x}:00): 79, pid={n}, name=python3, GPU has fallen off the bus.",
    "NVRM: Xid (PCI:0000:{b:02x}:00): 74, pid={n}, name=python3, NVLink: fatal error detected on link 3",
    "NVRM: Xid (PCI:0000:{b:02x}:00): 119, pid={n}, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU0 GSP!",
]
target = megabytes * 1000 * 1000
t = 5.0
written = 0
with open(path, "w") as out:
    chunk = []
    while written < target:
        t += random.random() * 0.01
        template = random.choice(events) if random.random() < 0.005 else random.choice(ordinary)
        line = "[{:>12.6f}] ".format(t) + template.format(a=random.randint(1, 9), n=random.randint(100, 99999),
                                                       b=random.choice([0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]),
                                                       p=random.choice([0x15, 0x97])) + "\n"
        chunk.append(line)
        written += len(line)
        if len(chunk) >= 10000:
            out.write("".join(chunk))
            chunk = []
    out.write("".join(chunk))
PY

# The messages pcieval's kernel-log reader looks for, as one extended regex.
pattern='available PCIe bandwidth, limited by|PCIe Bus Error: severity=|AER: (Corrected|Uncorrected|Multiple)|Surprise Down|\] SDES|Link Bandwidth Notification|bwctrl|NVRM: Xid|fallen off the bus'
size_mb=$(( $(stat -c %s "$log") / 1000000 ))
cat "$log" >/dev/null  # both read from the page cache

# "wall cpu" seconds of one run (cpu = user + sys): on a shared machine the
# CPU time is the fairer comparison, the wall time what a user waits.
times_of() {
  local TIMEFORMAT='%R %U %S'
  { time "$@" >"$work/out" 2>/dev/null; } 2>"$work/time" || true
  awk '{ printf "%s %s\n", $1, $2 + $3 }' "$work/time"
}
# Paired runs: each round runs grep, diagnose --format kernel-log (the parser
# alone) and diagnose as users run it (the format detected, the file split
# into sections by format) back to back (and both of BASELINE's with -c), in
# an order that rotates from round to round, and each diagnose run is divided
# by the grep run of its round.
# Whatever else this (shared) machine does at the time weighs on both sides
# of a ratio, so the medians of the pairwise ratios, with their spread, are
# the result, not a ratio of medians taken at different times.
: >"$work/rounds"
runs=3
[[ -n "$baseline" ]] && runs=5
for round in $(seq "$repetitions"); do
  declare -A wall=() cpu=()
  for k in $(seq 0 $((runs - 1))); do
    case $(( (round + k) % runs )) in
      0) read -r wall[grep] cpu[grep] < <(times_of grep -cE "$pattern" "$log")
         grep_count=$(cat "$work/out") ;;
      1) read -r wall[forced] cpu[forced] < <(times_of "$pcieval" diagnose --format kernel-log -o "$work/results.json" -q "$log") ;;
      2) read -r wall[auto] cpu[auto] < <(times_of "$pcieval" diagnose -o "$work/results-auto.json" -q "$log") ;;
      3) read -r wall[base_forced] cpu[base_forced] < <(times_of "$baseline" diagnose --format kernel-log -o "$work/base.json" -q "$log") ;;
      4) read -r wall[base_auto] cpu[base_auto] < <(times_of "$baseline" diagnose -o "$work/base-auto.json" -q "$log") ;;
    esac
  done
  line="${wall[grep]} ${cpu[grep]} ${wall[forced]} ${cpu[forced]} ${wall[auto]} ${cpu[auto]}"
  [[ -n "$baseline" ]] && line="$line ${wall[base_forced]} ${cpu[base_forced]} ${wall[base_auto]} ${cpu[base_auto]}"
  echo "$line" >>"$work/rounds"
done
events=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(next((n for n in d['notes'] if 'PCIe events in' in n), '?'))" "$work/results.json")
printf 'log: %s MB, %s lines matched by grep -cE\n' "$size_mb" "$grep_count"
printf 'pcieval diagnose: %s\n' "$events"
python3 - "$work/rounds" "$size_mb" <<'PY'
import statistics, sys
rounds = [list(map(float, line.split())) for line in open(sys.argv[1])]
mb = float(sys.argv[2])
names = {"grep": (0, 1), "diagnose --format kernel-log": (2, 3), "diagnose (format detected)": (4, 5)}
baseline = len(rounds[0]) > 6
if baseline:
    names["baseline --format kernel-log"] = (6, 7)
    names["baseline (format detected)"] = (8, 9)
def spread(values):
    return f"median {statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"
for name, (w, c) in names.items():
    walls, cpus = [r[w] for r in rounds], [r[c] for r in rounds]
    print(f"{name:<28} wall s {spread(walls)} = {mb / statistics.median(walls):6.0f} MB/s;"
          f"  cpu s {spread(cpus)}")
print(f"ratios to grep of the same round, {len(rounds)} rounds, median (min-max):")
worst = 0.0
for name, (w, c) in list(names.items())[1:]:
    walls = [r[w] / r[0] for r in rounds]
    cpus = [r[c] / max(r[1], 1e-3) for r in rounds]
    if not name.startswith("baseline"):
        worst = max(worst, statistics.median(cpus))
    print(f"  {name:<28} wall {spread(walls)}  cpu {spread(cpus)}")
if baseline:
    print("ratios to the baseline of the same round, median (min-max):")
    for name, new, old in (("--format kernel-log", 2, 6), ("format detected", 4, 8)):
        walls = [r[new] / r[old] for r in rounds]
        cpus = [r[new + 1] / max(r[old + 1], 1e-3) for r in rounds]
        print(f"  {name:<28} wall {spread(walls)}  cpu {spread(cpus)}")
print("aim: wall ratio <= 1 (diagnose as fast as grep -cE); fails at cpu ratio > 2")
if worst > 2:
    print("FAIL: diagnose reads the log more than twice as slowly as grep scans it", file=sys.stderr)
    sys.exit(1)
print("PASS")
PY
