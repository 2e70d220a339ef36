#!/usr/bin/env python3
"""The runtime library table of docs/measuring-on-a-gpu.md is what ldd says.

A user who carries a build folder to a GPU node installs the packages that
table lists; a library the binary needs and the table omits (libsimdjson14
once) is found only there, as "error while loading shared libraries". This
compares the table's `lib*.so.N` names with `ldd BINARY`, both ways, and
checks that no CUDA library is among them (the driver is loaded at run time).

    runtime_libraries_test.py DOC BINARY
"""
import re
import subprocess
import sys

doc, binary = sys.argv[1], sys.argv[2]
text = open(doc, encoding="utf-8").read()
section = text.split("## Running a copied build on another machine", 1)[1].split("\n## ", 1)[0]
table = [line for line in section.splitlines() if line.startswith("| `lib")]
documented = set()
for line in table:
    documented.update(re.findall(r"`(lib[\w+.-]+\.so\.\d+)`", line.split("|")[1]))

ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
needed = set()
for line in ldd.splitlines():
    name = line.strip().split(" ", 1)[0]
    if name.startswith("lib") and ".so" in name:
        needed.add(name)
# The dynamic loader and the vDSO are the kernel's and libc's, not packages to install.
needed = {name for name in needed if not name.startswith(("linux-vdso", "ld-linux"))}

failures = []
for name in sorted(needed - documented):
    failures.append(f"ldd {binary} needs {name}, which the table in {doc} does not list")
for name in sorted(documented - needed):
    failures.append(f"the table in {doc} lists {name}, which ldd {binary} does not show")
for name in sorted(needed):
    if re.match(r"lib(cuda|cudart|nvidia-ml|nccl)\b", name):
        failures.append(f"{binary} links {name}: the NVIDIA libraries must be loaded at run time")
print(f"ldd: {', '.join(sorted(needed))}")
for failure in failures:
    print("FAIL: " + failure)
sys.exit(1 if failures else 0)
