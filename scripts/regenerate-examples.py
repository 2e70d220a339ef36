#!/usr/bin/env python3
"""Regenerates results_schema/examples/ from pcieval itself, so that every
example's verdicts are the ones this pcieval judges of its evidence.

The examples were hand-written, verdicts included, and drifted from the rules:
`pcieval validate` of the H100 example gave 7 verdicts where the file held 3,
and the pages quoting it showed a result no run gives. Now:

- the node documents (fail-downgraded-h100-spr, pass-1gpu-l40s-genoa,
  pass-no-gpu-epyc-storage) keep their hand-written evidence, modelled on
  real hardware (results_schema/README.md), and take `schema_version`,
  `tool`, `thresholds`, `verdicts`,
  `overall` and `summary` from `pcieval validate EXAMPLE -o TMP`; the note
  validate adds ("re-judged from ...") is left out, so that a second run
  changes nothing;
- the fleet document (fleet-hgx-a100.json) is made end to end: `pcieval
  check` of the HGX A100 fixture machines (build/fixtures), copy
  measurements added by bench/perf/fleet_docs.py (GENERATED: one GPU of
  hgx-a02 at 22.5 GB/s, in the warning band of its node's budget but an
  outlier of the fleet), each node judged again by `pcieval validate` (the
  measurements came after check judged), then `pcieval fleet merge`.

tests/report/examples_test.py checks that validate of each node example
reproduces its verdicts and that this script, run again, writes the files
as committed.

  regenerate-examples.py [-b BUILD_DIR] [--out DIR]

BUILD_DIR (default build) holds pcieval and the fixture machines: `cmake
--build build --target pcieval pcieval_fixtures`. --out (default
results_schema/examples) is where the documents are written.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES_DIR = os.path.join(SOURCE_DIR, "results_schema", "examples")
NODE_EXAMPLES = ["fail-downgraded-h100-spr.json", "pass-1gpu-l40s-genoa.json", "pass-no-gpu-epyc-storage.json"]
FLEET_EXAMPLE = "fleet-hgx-a100.json"
REJUDGED_FIELDS = ["schema_version", "tool", "thresholds", "verdicts", "overall", "summary"]
# The slow GPU of the fleet: node 2 (hgx-a02), GPU index 3 (0000:24:00.0).
SLOW_GPU = "2:3:22.5"
WIDTH = 120


def dumps(value, indent=0):
    """JSON as the hand-written examples lay it out: an object or array that
    holds no object, e.g. `{ "generation": 5, "width": 16 }`, on one line when
    it fits in WIDTH columns; anything else one member or element a line."""
    def flat(v):
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {flat(x)}" for k, x in v.items()) + " }" \
                if v else "{}"
        if isinstance(v, list):
            return "[" + ", ".join(flat(x) for x in v) + "]"
        return json.dumps(v, ensure_ascii=False)

    def holds_object(v):
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else []
        return any(isinstance(c, dict) or (isinstance(c, list) and holds_object(c)) for c in children)

    one_line = flat(value)
    if not isinstance(value, (dict, list)) or not value or (not holds_object(value) and indent + len(one_line) <= WIDTH):
        return one_line
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {dumps(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dumps(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def write(path, document):
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(document) + "\n")


def run(args, **kw):
    """Runs pcieval; exit 0, 1 and 3 are verdicts, anything else is an error."""
    done = subprocess.run(args, capture_output=True, text=True, **kw)
    if done.returncode not in (0, 1, 3):
        sys.exit(f"regenerate-examples: {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
    return done


def rejudged(pcieval, path, scratch):
    """The example at PATH with this pcieval's verdicts of its evidence."""
    out = os.path.join(scratch, "validated.json")
    run([pcieval, "validate", "-q", path, "-o", out])
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    with open(out, encoding="utf-8") as f:
        validated = json.load(f)
    for field in REJUDGED_FIELDS:
        document[field] = validated[field]
    return document


def fleet(pcieval, fixtures, scratch):
    """check -> fleet_docs.py -> validate -> fleet merge, in SCRATCH so that
    each node's `source` reads results/HOST.json as the docs show."""
    results = os.path.join(scratch, "results")
    os.makedirs(results)
    generator = os.path.join(SOURCE_DIR, "bench", "perf", "fleet_docs.py")
    for machine, first, count, extra in (("hgx_a100_8gpu_gen4", 1, 2, ["--slow", SLOW_GPU]),
                                         ("hgx_a100_8gpu_gpu_x8", 3, 1, [])):
        base = os.path.join(scratch, machine + ".json")
        run([pcieval, "check", "-q", "--sysfs-root", os.path.join(fixtures, machine, "sys"),
             "--topology-xml", os.path.join(fixtures, machine, "topology.xml"), "-o", base])
        subprocess.run([sys.executable, generator, "--base", base, "--out", results, "--prefix", "hgx-a0",
                        "--first", str(first), "--count", str(count), *extra], check=True)
    hosts = sorted(os.listdir(results))
    for host in hosts:
        node = os.path.join("results", host)
        run([pcieval, "validate", "-q", node, "-o", node], cwd=scratch)
    run([pcieval, "fleet", "merge", "-q", *[os.path.join("results", h) for h in hosts], "-o", "fleet.json"],
        cwd=scratch)
    with open(os.path.join(scratch, "fleet.json"), encoding="utf-8") as f:
        return f.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--build-dir", default=os.path.join(SOURCE_DIR, "build"))
    parser.add_argument("--out", default=EXAMPLES_DIR)
    args = parser.parse_args()
    pcieval = os.path.abspath(os.path.join(args.build_dir, "pcieval"))
    fixtures = os.path.abspath(os.path.join(args.build_dir, "fixtures"))
    for needed in (pcieval, os.path.join(fixtures, "hgx_a100_8gpu_gen4")):
        if not os.path.exists(needed):
            sys.exit(f"regenerate-examples: no {needed}: cmake --build {args.build_dir} --target pcieval "
                     "pcieval_fixtures")
    os.makedirs(args.out, exist_ok=True)
    for name in NODE_EXAMPLES:
        with tempfile.TemporaryDirectory() as scratch:
            write(os.path.join(args.out, name), rejudged(pcieval, os.path.join(EXAMPLES_DIR, name), scratch))
    # The fleet document as fleet merge wrote it.
    with tempfile.TemporaryDirectory() as scratch:
        text = fleet(pcieval, fixtures, scratch)
    with open(os.path.join(args.out, FLEET_EXAMPLE), "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
