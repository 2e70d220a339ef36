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
failures = []
seen = 0
# Each top folder but tests/ and build folders (which may sit in the tree and
# hold thousands of files): the layers, app/, contrib/.
tops = [top for top in sorted(root.iterdir())
        if top.is_dir() and top.name != "tests" and not top.name.startswith(("build", "."))]
for path in (path for top in tops for path in sorted(top.rglob("*"))):
    if path.suffix not in {".hpp", ".cpp", ".cu", ".cuh"} or not path.is_file():
        continue
    relative = path.relative_to(root)
    text = path.read_text(errors="replace")
    for match in include.finditer(text):
        seen += 1
        if relative.parts[0] != match.group(1):
            line = text.count("\n", 0, match.start()) + 1
            failures.append(f"{relative}:{line}: includes {match.group(1)}/detail/, "
                            f"internal to {match.group(1)}/ (move what it needs to a public header)")
if seen == 0:
    failures.append("no #include of a detail/ header found: the check reads the wrong folder")
for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
