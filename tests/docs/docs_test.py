#!/usr/bin/env python3
"""Runs the commands the README and docs/ show, and compares what they print.

A fenced block is run when the line before it (blank lines aside) is the
marker

    <!-- docs-test -->                 exact comparison
    <!-- docs-test: numbers-vary -->   numbers and runs of spaces compared
                                       loosely (a live run: bandwidth, times)
    <!-- docs-test: no-gpu, ... -->    shows a live run on a machine without an
                                       NVIDIA GPU: skipped, and said, where
                                       the driver lists one

Inside the block, `$ CMD` lines are commands (a trailing backslash continues
one onto the next line); every other line is what the command before it
prints, stdout and stderr together. As in Python's doctest ELLIPSIS mode, a
line that is exactly `...` stands for any number of lines, and `...` inside a
line for any text. The commands of one block run in one bash, so `echo $?`
shows the exit code of the command before it; the blocks of one file share a
scratch folder, in which `build` is this build folder and every other entry
of the source tree is linked, so a page can say `build/pcieval ...` and
`tests/fixtures/...` as a reader in a checkout would.

Also checked, because a newcomer follows them: every relative link of those
pages names a file that exists (and a heading that exists, for `#anchor`),
and the README stays short enough to read (MAX_README_LINES).

Usage: docs_test.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MAX_README_LINES = 250
BLOCK_TIMEOUT_S = 120
# CommonMark: a backtick fence's info string has no backtick, so a line such
# as "```` ``` ```` fences" is inline code, not a fence.
FENCE = re.compile(r"^(`{3,})[^`]*$")
MARKER = re.compile(r"^<!--\s*docs-test(?::\s*(?P<options>[a-z, -]+))?\s*-->\s*$")
KNOWN_OPTIONS = {"numbers-vary", "no-gpu"}


class Block:
    def __init__(self, page, line, options, lines):
        self.page, self.line, self.options, self.lines = page, line, options, lines

    def commands(self):
        """[(command text, [expected lines])] or raises ValueError."""
        steps = []
        pending = None
        for text in self.lines:
            if pending is not None:
                pending += "\n" + text
                if not text.endswith("\\"):
                    steps.append((pending, []))
                    pending = None
                continue
            if text.startswith("$ "):
                command = text[2:]
                if command.endswith("\\"):
                    pending = command
                else:
                    steps.append((command, []))
            elif not steps:
                raise ValueError("output before the first `$ ` command")
            else:
                steps[-1][1].append(text)
        if pending is not None:
            raise ValueError("the block ends inside a continued command")
        return steps


def runnable_blocks(page):
    """Every marked fenced block of a markdown page."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, options, i = [], None, 0
    while i < len(lines):
        stripped = lines[i].strip()
        match = MARKER.match(stripped)
        if match:
            options = {o.strip() for o in (match.group("options") or "").split(",") if o.strip()}
            unknown = options - KNOWN_OPTIONS
            if unknown:
                raise ValueError(f"{page}:{i + 1}: unknown docs-test option {sorted(unknown)}")
            i += 1
            continue
        fence_match = FENCE.match(stripped)
        if fence_match:
            fence = fence_match.group(1)
            start = i
            body = []
            i += 1
            while i < len(lines) and not re.fullmatch(re.escape(fence) + "`*", lines[i].strip()):
                body.append(lines[i])
                i += 1
            if options is not None:
                blocks.append(Block(page, start + 1, options, body))
            options = None
            i += 1
            continue
        if stripped and options is not None:
            raise ValueError(f"{page}:{i + 1}: a docs-test marker must come right before a fenced block")
        i += 1
    return blocks


def machine_has_nvidia_gpu():
    gpus = Path("/proc/driver/nvidia/gpus")
    return gpus.is_dir() and any(gpus.iterdir())


def loosen(text):
    text = re.sub(r"[0-9]+(\.[0-9]+)?", "N", text)
    return re.sub(r"\s+", " ", text).strip()


def line_matches(pattern, actual, options):
    if "numbers-vary" in options:
        pattern, actual = loosen(pattern), loosen(actual)
    else:
        pattern, actual = pattern.rstrip(), actual.rstrip()
    regex = ".*".join(re.escape(part) for part in pattern.split("..."))
    return re.fullmatch(regex, actual) is not None


def output_matches(expected, actual, options):
    """doctest-style: `...` alone matches any run of lines (greedy search)."""
    memo = {}

    def match(e, a):
        key = (e, a)
        if key in memo:
            return memo[key]
        if e == len(expected):
            result = a == len(actual)
        elif expected[e].strip() == "...":
            result = any(match(e + 1, k) for k in range(a, len(actual) + 1))
        else:
            result = a < len(actual) and line_matches(expected[e], actual[a], options) and match(e + 1, a + 1)
        memo[key] = result
        return result

    return match(0, 0)


def scratch_folder(source_dir, build_dir):
    scratch = Path(tempfile.mkdtemp(prefix="pcieval-docs-"))
    for entry in source_dir.iterdir():
        if entry.name in ("build", ".git"):
            continue
        (scratch / entry.name).symlink_to(entry)
    (scratch / "build").symlink_to(build_dir)
    return scratch


def run_block(block, scratch, build_dir):
    """Runs a block's commands in one bash; returns [(command, expected, actual lines)]."""
    steps = block.commands()
    marker = "@@pcieval-docs-test-step@@"
    script = ["exec 2>&1 </dev/null"]
    for n, (command, _) in enumerate(steps):
        # The marker's echo must not hide the exit code from `echo $?`.
        script.append(f"pcieval_docs_rc=$?; echo '{marker}{n}'; (exit $pcieval_docs_rc)")
        script.append(command)
    env = dict(os.environ)
    env.update(PATH=f"{build_dir}:{env.get('PATH', '/usr/bin:/bin')}", HOME=str(scratch), TZ="UTC",
               LC_ALL="C.UTF-8", COLUMNS="200", XDG_DATA_HOME=str(scratch / ".local-share"))
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=scratch, env=env, stdout=subprocess.PIPE,
                          timeout=BLOCK_TIMEOUT_S)
    text = proc.stdout.decode("utf-8", errors="replace")
    outputs = {}
    current = None
    for line in text.splitlines():
        if line.startswith(marker):
            current = int(line[len(marker):])
            outputs[current] = []
        elif current is not None:
            outputs[current].append(line)
    return [(command, expected, outputs.get(n, [])) for n, (command, expected) in enumerate(steps)]


def github_anchor(heading):
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def link_problems(page, source_dir):
    problems = []
    text = page.read_text(encoding="utf-8")
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.strip()):
            in_fence = not in_fence
        if in_fence:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                problems.append(f"{page.relative_to(source_dir)}:{number}: link to missing {target}")
                continue
            if anchor and file.suffix == ".md":
                anchors = {github_anchor(h) for h in re.findall(r"^#+ (.*)$", file.read_text(encoding="utf-8"),
                                                               re.MULTILINE)}
                if anchor not in anchors:
                    problems.append(f"{page.relative_to(source_dir)}:{number}: no heading for #{anchor} in {path or page.name}")
    return problems


def main():
    source_dir, build_dir = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    pages = [source_dir / "README.md"] + sorted((source_dir / "docs").glob("*.md"))
    pages.append(source_dir / "results_schema" / "README.md")
    failures = []
    readme_lines = len((source_dir / "README.md").read_text(encoding="utf-8").splitlines())
    if readme_lines > MAX_README_LINES:
        failures.append(f"README.md has {readme_lines} lines, more than {MAX_README_LINES}: "
                        "move reference material to docs/")
    blocks_run = commands_run = 0
    for page in pages:
        if not page.exists():
            continue
        failures += link_problems(page, source_dir)
        try:
            blocks = runnable_blocks(page)
        except ValueError as error:
            failures.append(str(error))
            continue
        if not blocks:
            continue
        scratch = scratch_folder(source_dir, build_dir)
        try:
            for block in blocks:
                where = f"{page.relative_to(source_dir)}:{block.line}"
                if "no-gpu" in block.options and machine_has_nvidia_gpu():
                    print(f"skipped {where}: it shows a machine without a GPU, and this one has one")
                    continue
                try:
                    results = run_block(block, scratch, build_dir)
                except (ValueError, subprocess.TimeoutExpired) as error:
                    failures.append(f"{where}: {error}")
                    continue
                blocks_run += 1
                for command, expected, actual in results:
                    commands_run += 1
                    if not output_matches(expected, actual, block.options):
                        failures.append(f"{where}: `{command}` printed something else.\n--- shown\n"
                                        + "\n".join(expected) + "\n--- printed\n" + "\n".join(actual))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"docs test: {commands_run} commands in {blocks_run} blocks of {len(pages)} pages")
    for failure in failures:
        print(f"FAIL {failure}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
