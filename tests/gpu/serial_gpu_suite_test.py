#!/usr/bin/env python3
"""Every test of the GPU suite holds the `gpu` resource lock (issue 17, item 3).

ctest runs `make test` with -j N; without a common RESOURCE_LOCK up to N GPU
tests would share one GPU and one PCIe link at once, and their timing
assertions and bandwidth numbers would measure each other. Reads what ctest
itself will do (--show-only=json-v1), so it checks the configured build, not
the CMake source.

    serial_gpu_suite_test.py CTEST BUILD_DIR [NAME_REGEX]

NAME_REGEX: tests of other suites that use the GPU where there is one (a live
`pcieval check`), which must hold the lock too.
"""
import json
import re
import subprocess
import sys

ctest, build_dir = sys.argv[1], sys.argv[2]
also = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
shown = subprocess.run([ctest, "--test-dir", build_dir, "--show-only=json-v1"],
                       check=True, capture_output=True, text=True).stdout


def labels(test):
    for p in test.get("properties", []):
        if p["name"] == "LABELS":
            return p["value"]
    return []


tests = [t for t in json.loads(shown).get("tests", [])
         if "gpu" in labels(t) or (also is not None and also.search(t["name"]))]
if not tests:
    print("FAIL: ctest lists no GPU test (is test_gpu built?)")
    sys.exit(1)
unlocked = []
for test in tests:
    properties = {p["name"]: p["value"] for p in test.get("properties", [])}
    locks = properties.get("RESOURCE_LOCK") or []
    if "gpu" not in locks and not properties.get("RUN_SERIAL"):
        unlocked.append(test["name"])
print(f"{len(tests)} tests that use a GPU, {len(unlocked)} without the gpu lock")
for name in unlocked:
    print("FAIL: " + name + " may run beside other GPU tests")
sys.exit(1 if unlocked else 0)
