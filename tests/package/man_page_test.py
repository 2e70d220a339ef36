#!/usr/bin/env python3
"""pcieval(1) against the binary it documents: every subcommand the binary
offers (its --help, recursively) and every subcommand app/ declares
(add_subcommand in the sources, read without the generator's parser) has its
section, and every option of every subcommand's --help is in the page. The
page is rendered with groff when it is installed, and any groff warning fails.

  man_page_test.py PCIEVAL_BINARY MAN_PAGE_GZ SOURCE_DIR
"""
import gzip
import pathlib
import re
import shutil
import subprocess
import sys


def help_text(binary, words):
    return subprocess.run(["pcieval", *words, "--help"], executable=binary, capture_output=True, text=True,
                          check=True).stdout


def subcommands(text):
    """Names listed under "Subcommands:": each entry's first word."""
    names, inside = [], False
    for line in text.splitlines():
        if re.match(r"^\S.*:\s*$", line):
            inside = line.strip().lower() == "subcommands:"
        elif inside and re.match(r"^  \S", line):
            names.append(line.split()[0])
    return names


def main():
    binary, page_path, source_dir = sys.argv[1:4]
    roff = gzip.open(page_path, "rt").read()
    failures = []

    rendered = roff
    if shutil.which("groff"):
        result = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-P-c", "-P-b", "-P-u"], input=roff,
                                capture_output=True, text=True, check=False)
        if result.returncode != 0 or result.stderr.strip():
            failures.append(f"groff: exit {result.returncode}: {result.stderr.strip()}")
        rendered = result.stdout
        # groff renders \- as U+2212 and may hyphenate; read it as typed.
        rendered = rendered.replace("\u2212", "-").replace("\u2010", "-")
    else:
        print("groff not installed: the page is checked as roff, not rendered")
        rendered = roff.replace("\\-", "-").replace("\\fB", "").replace("\\fI", "").replace("\\fR", "")

    # The subcommands as the binary offers them, nested ones too.
    pending, seen = [[name] for name in subcommands(help_text(binary, []))], []
    if not pending:
        failures.append("pcieval --help lists no subcommands")
    while pending:
        words = pending.pop(0)
        seen.append(" ".join(words))
        text = help_text(binary, words)
        if not re.search(rf"^\s*pcieval {re.escape(' '.join(words))}\s*$", rendered, re.M):
            failures.append(f"no section 'pcieval {' '.join(words)}'")
        for option in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))):
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", rendered):
                failures.append(f"'pcieval {' '.join(words)}' option {option} is not in the page")
        pending[0:0] = [words + [name] for name in subcommands(text)]

    # The subcommands app/ declares, found without --help: a parser that
    # missed them all would otherwise pass the loop above with nothing seen.
    declared = set()
    for source in pathlib.Path(source_dir, "app").glob("*.cpp"):
        declared |= set(re.findall(r'add_subcommand\(\s*"([a-z][a-z0-9-]*)"', source.read_text()))
    if not declared:
        failures.append("no add_subcommand(\"...\") found in app/")
    seen_last_words = {name.split()[-1] for name in seen}
    for name in sorted(declared - seen_last_words):
        failures.append(f"app/ declares subcommand '{name}', which pcieval --help does not list")
    for name in sorted(declared):
        if not re.search(rf"^\s*pcieval (\S+ )*{re.escape(name)}\s*$", rendered, re.M):
            failures.append(f"subcommand '{name}' (app/) has no section in the page")
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS", "EXIT STATUS"):
        if not re.search(rf"^\.SH \"?{section}\"?$", roff, re.M):
            failures.append(f"no {section} section")

    # The help cites guides by their place in the source tree; the package
    # ships them under /usr/share/doc/pcieval, and the page must say so
    # (package_test.sh checks that every path the page names is packaged).
    for cited in sorted(set(re.findall(r"(?<![\w/.-])(?:docs|sim)/[\w.-]+\.md", rendered))):
        failures.append(f"the page cites {cited}, a path of the source tree, not where the package installs it")

    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"pcieval(1): {len(seen)} subcommands ({', '.join(seen)}), every option present")


if __name__ == "__main__":
    main()
