#!/usr/bin/env python3
"""Every kernel of kernels/ is preloaded (issue 17, item 2).

CUDA loads each module lazily, at the first launch of one of its kernels, and
that load may wait for the device to go idle: a first launch queued behind a
latch kernel then hangs until the latch times out. preload_kernels() exists to
load every kernel before any stream is held; this checks, on the source, that
every __global__ function of kernels/*.cu is loaded by a cudaFuncGetAttributes
call, and that every function doing so is called from preload_kernels(). It
needs no GPU, so it catches a new kernel that was not added to the list on any
machine, not only on the GPU node where the hang would show.

    preload_audit_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1]) / "kernels"
# The kernels are in .cu files; preload_kernels() is in cuda_device.cpp, plain
# C++ against the CUDA runtime.
sources = {path.name: path.read_text() for pattern in ("*.cu", "*.cpp") for path in sorted(root.glob(pattern))}

kernels = {}  # name -> file
for name, text in sources.items():
    for match in re.finditer(r"__global__\s+void\s+(\w+)\s*\(", text):
        kernels[match.group(1)] = name

loaded = set()
loaders = {}  # function that calls cudaFuncGetAttributes -> kernels it loads
for name, text in sources.items():
    for match in re.finditer(r"Status\s+(\w+)\s*\(\s*\)\s*\{(.*?)\n\}", text, re.S):
        body = match.group(2)
        found = re.findall(r"cudaFuncGetAttributes\s*\(\s*&\s*\w+\s*,\s*(\w+)\s*\)", body)
        if found:
            loaders[match.group(1)] = found
            loaded.update(found)

preload = re.search(r"Status\s+preload_kernels\s*\(\s*int\s+ordinal\s*\)\s*\{(.*?)\n\}",
                    sources.get("cuda_device.cpp", ""), re.S)
failures = []
if not kernels:
    failures.append("no __global__ function found under kernels/: the audit reads the wrong folder")
if preload is None:
    failures.append("preload_kernels(int ordinal) not found in kernels/cuda_device.cpp")
for kernel, where in sorted(kernels.items()):
    if kernel not in loaded:
        failures.append(f"{where}: kernel {kernel} is never loaded by cudaFuncGetAttributes")
for loader, names in sorted(loaders.items()):
    if preload is not None and not re.search(r"\b" + loader + r"\s*\(", preload.group(1)):
        failures.append(f"{loader} (loads {', '.join(names)}) is not called from preload_kernels")

print(f"{len(kernels)} kernels in {len(sources)} files; loaders: " +
      ", ".join(f"{k} ({len(v)})" for k, v in sorted(loaders.items())))
for failure in failures:
    print("FAIL: " + failure)
sys.exit(1 if failures else 0)
