#!/usr/bin/env python3
"""Generates node results documents for `pcieval fleet merge`: GENERATED DATA,
not measurements.

Takes a results document that pcieval wrote for a fixture machine (for the
scale benchmark: `pcieval check` on tests/fixtures' hgx_a100_8gpu_gen4, an HGX
A100 8-GPU host behind four PCIe Gen4 switches) and writes COUNT copies, each
with its own host name and, for every GPU of the document, an h2d_ce and a
d2h_ce measurement (256 MiB, 5 trials) whose median is drawn around 25.7 and
25.8 GB/s, the DGX A100 bandwidthTest figures cited in PCIE-FACTS.md. The
draw is seeded, so a run is reproducible.

  fleet_docs.py --base BASE.json --out DIR --count N [--prefix node]
                [--slow NODE:GPU:GBPS ...] [--seed S]
"""
import argparse
import copy
import json
import os
import random
import statistics

MIB = 1 << 20
HOST_MARK = "@@fleet_docs host@@"
MEASUREMENTS_MARK = "@@fleet_docs measurements@@"


def measurement(probe, direction, gpu, median, rng):
    trials = [round(median + rng.uniform(-0.03, 0.03), 4) for _ in range(5)]
    mean = statistics.fmean(trials)
    return {
        "probe": probe, "subject": gpu, "gpus": [gpu], "direction": direction, "method": "ce",
        "host_memory": "pinned", "aggregation": "alone", "size_bytes": 256 * MIB, "bytes_per_trial": 256 * MIB,
        "trials_gbps": trials, "median_gbps": statistics.median(trials), "min_gbps": min(trials),
        "max_gbps": max(trials), "cv": statistics.stdev(trials) / mean, "host_numa_node": 0,
        "host_numa_local": True, "verified": True,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--prefix", default="node")
    parser.add_argument("--first", type=int, default=0, help="index of the first node")
    parser.add_argument("--slow", action="append", default=[], help="NODE:GPU:GBPS, h2d and d2h of that GPU")
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()

    base = json.load(open(args.base))
    gpus = [d["bdf"] for d in base["devices"] if d["kind"] == "gpu"]
    slow = {}
    for entry in args.slow:
        node, gpu, gbps = entry.split(":")
        slow[(int(node), int(gpu))] = float(gbps)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    width = len(str(args.first + args.count - 1))
    # The base document is rendered once around two markers (the host name
    # and the measurements), and each node's text is that template filled in:
    # json.dump with an indent runs the pure-Python encoder, and 100,000 whole
    # documents took over ten minutes. The text is what dumping each whole
    # document gives.
    doc = copy.deepcopy(base)
    doc["host"]["hostname"] = HOST_MARK
    doc["probe_settings"] = {"mode": "quick", "size_bytes": 256 * MIB, "warmup_trials": 1, "trials": 5}
    doc["probes"] = [{"key": k, "status": "ran", "reason": "", "warnings": [], "duration_s": 1.5}
                     for k in ("h2d_ce", "d2h_ce")]
    doc["measurements"] = MEASUREMENTS_MARK
    template = json.dumps(doc, indent=2) + "\n"
    before_host, after_host = template.split(json.dumps(HOST_MARK))
    for n in range(args.first, args.first + args.count):
        host = f"{args.prefix}{n:0{width}d}"
        measurements = []
        for i, gpu in enumerate(gpus):
            h2d = slow.get((n, i), rng.gauss(25.7, 0.08))
            d2h = slow.get((n, i), rng.gauss(25.8, 0.08))
            measurements.append(measurement("h2d_ce", "h2d", gpu, h2d, rng))
            measurements.append(measurement("d2h_ce", "d2h", gpu, d2h, rng))
        # Nested one level down: every line after the first indented by two more.
        rendered = json.dumps(measurements, indent=2).replace("\n", "\n  ")
        text = (before_host + json.dumps(host) + after_host).replace(json.dumps(MEASUREMENTS_MARK), rendered)
        with open(os.path.join(args.out, host + ".json"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
