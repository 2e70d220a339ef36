#!/usr/bin/env python3
"""A layer's detail/ headers are its own (issue 20): only files of that layer
include them. The build cannot hide them (each layer's include root exposes
its whole folder), so this reads the sources instead. Tests may include
them: they test a layer's internals.

    detail_headers_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
include = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/detail/[^"]+"', re.M)
skipped = {"tests", "build", "shared"}
failures = []
seen = 0
for path in sorted(root.rglob("*")):
    relative = path.relative_to(root)
    if relative.parts[0] in skipped or relative.parts[0].startswith(".") or not path.is_file():
        continue
    if path.suffix not in {".hpp", ".cpp", ".cu", ".cuh"}:
        continue
    for match in include.finditer(path.read_text(errors="replace")):
        seen += 1
        if relative.parts[0] != match.group(1):
            line = path.read_text(errors="replace").count("\n", 0, match.start()) + 1
            failures.append(f"{relative}:{line}: includes {match.group(1)}/detail/, "
                            f"internal to {match.group(1)}/ (move what it needs to a public header)")
if seen == 0:
    failures.append("no #include of a detail/ header found: the check reads the wrong folder")
for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
