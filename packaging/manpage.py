#!/usr/bin/env python3
"""Writes pcieval's man pages from the binary's own help, so that the page
cannot drift from the command line: every subcommand, option and description
comes from `pcieval --help` and `pcieval SUB --help` as CLI11 prints them.

  manpage.py --binary BUILD/pcieval --version V --out pcieval.1.gz \
             [--schema-dir DIR] [--units-dir DIR] [--libexec-dir DIR] [--examples-dir DIR] [--doc-dir DIR]
  manpage.py --mpi --version V --out pcieval-mpi.1.gz

The help cites the guides by their place in the source tree (docs/verdicts.md,
sim/README.md); the package installs them under --doc-dir in the same layout,
so the page names them there, and never a path the package does not ship.

The pages are gzipped without a name or time stamp in the gzip header (as
`gzip -9n` does) and dated from SOURCE_DATE_EPOCH when it is set, so that a
rebuild of the same sources gives the same bytes.
"""
import argparse
import datetime
import gzip
import os
import re
import subprocess
import sys

# CLI11 ends a section heading ("Options:", "Subcommands:") with a colon at
# column 0 and indents each entry by two spaces.
HEADING = re.compile(r"^(\S[^:]*):\s*$")


def run_help(binary, words):
    # argv[0] "pcieval": CLI11 prints argv[0] in its Usage line, and the page
    # must say the installed name, not the build path.
    result = subprocess.run(["pcieval", *words, "--help"], executable=binary, capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        sys.exit(f"manpage.py: '{binary} {' '.join(words)} --help' exited {result.returncode}: {result.stderr}")
    return result.stdout


def description_column(lines):
    """The column CLI11 aligns descriptions at: the most common start of text
    after the first gap of two or more spaces in an entry line."""
    starts = {}
    for line in lines:
        match = re.match(r"^  \S.*?\s{2,}(?=\S)", line)
        if match:
            starts[match.end()] = starts.get(match.end(), 0) + 1
    return max(starts, key=lambda column: (starts[column], -column)) if starts else 30


def parse_help(text):
    """(description, usage, sections): sections is a list of (heading,
    [(name, description)]) in the order printed."""
    lines = text.splitlines()
    column = description_column(lines)
    description, usage, sections = [], "", []
    for line in lines:
        heading = HEADING.match(line)
        if line.startswith("Usage:"):
            usage = line[len("Usage:"):].strip()
        elif heading and not line.startswith(" "):
            sections.append((heading.group(1), []))
        elif not sections:
            if line.strip():
                description.append(line.strip())
        elif line.startswith("  ") and not line.startswith(" " * column) and line.strip():
            name, text_part = line, ""
            if len(line) > column and line[column - 1] == " ":
                name, text_part = line[:column], line[column:]
            sections[-1][1].append([name.strip(), text_part.strip()])
        elif line.strip() and sections[-1][1]:
            entry = sections[-1][1][-1]
            entry[1] = (entry[1] + " " + line.strip()).strip()
    return " ".join(description), usage, sections


def roff(text):
    """Text safe in a roff line: backslashes escaped, a leading dot or quote
    neutralised, and the hyphens of option names made minus signs (so that a
    copied `--flag` is typed as it reads)."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"(?<![\w-])--?[\w\[][\w\[\]-]*", lambda m: m.group(0).replace("-", "\\-"), text)
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


# A guide of the source tree as the help cites it: "docs/verdicts.md",
# "sim/README.md", "README.md", not a longer path that merely ends so.
SOURCE_DOC = re.compile(r"(?<![\w/.-])((?:docs|sim)/[\w.-]+\.md|README\.md)")


def installed_docs(text, doc_dir):
    """`text` with every guide of the source tree named where --doc-dir puts
    it. Without --doc-dir (a page for the build tree) the paths stay."""
    return SOURCE_DOC.sub(lambda m: f"{doc_dir}/{m.group(1)}", text) if doc_dir else text


def option_name(name):
    """-o,--output FILE -> bold flags, the rest (value, Excludes: ...) as is."""
    flags, _, rest = name.partition(" ")
    if not flags.startswith("-"):
        return f"\\fI{roff(name)}\\fR"  # a positional: RESULTS, FILE, BDF
    bold = ", ".join(f"\\fB{roff(flag)}\\fR" for flag in flags.split(","))
    return bold + (" " + roff(rest) if rest else "")


def render_sections(out, sections, skip=("Subcommands",)):
    for heading, entries in sections:
        if heading in skip or not entries:
            continue
        out.append(f".PP\n{roff(heading)}:")
        for name, text in entries:
            out.append(f".TP\n{option_name(name)}\n{roff(text)}" if text else f".TP\n{option_name(name)}")


def subcommand_names(sections):
    return [name.split()[0] for heading, entries in sections if heading == "Subcommands" for name, _ in entries]


def page_date():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else datetime.datetime.now(
        datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d")


def pcieval_page(args):
    description, usage, sections = parse_help(installed_docs(run_help(args.binary, []), args.doc_dir))
    summary = re.sub(r"^pcieval:\s*", "", description).rstrip(".")
    out = [f'.TH PCIEVAL 1 "{page_date()}" "pcieval {args.version}" "User Commands"',
           ".SH NAME", f"pcieval \\- {roff(summary)}",
           ".SH SYNOPSIS", f".B pcieval\n{roff(usage.removeprefix('pcieval').strip())}",
           ".SH DESCRIPTION", roff(summary) + ".",
           ".PP\nEach subcommand has its own options, listed under SUBCOMMANDS and by "
           "\\fBpcieval\\fR \\fISUBCOMMAND\\fR \\fB\\-\\-help\\fR."]
    out.append(".SH OPTIONS")
    render_sections(out, sections)

    out.append(".SH SUBCOMMANDS")
    # Depth first, as a reader meets them: "fleet", then "fleet merge".
    pending = [[name] for name in subcommand_names(sections)]
    if not pending:
        sys.exit("manpage.py: no subcommands in 'pcieval --help'; has CLI11's help format changed?")
    while pending:
        words = pending.pop(0)
        sub_description, sub_usage, sub_sections = parse_help(installed_docs(run_help(args.binary, words),
                                                                             args.doc_dir))
        out.append(f'.SS "pcieval {" ".join(words)}"')
        out.append(roff(sub_description))
        out.append(f".PP\nUsage: \\fB{roff(sub_usage)}\\fR")
        render_sections(out, sub_sections)
        pending[0:0] = [words + [name] for name in subcommand_names(sub_sections)]

    out.append(".SH EXIT STATUS")
    # The contract of DESIGN.md "Exit codes", which burn-in scripts and Slurm
    # health checks rely on.
    for code, meaning in (("0", "every verdict pass"),
                          ("1", "at least one failing verdict (link_downgraded, bandwidth_low, link_errors, missing), "
                                "even when an output could not be written (that error is still on stderr)"),
                          ("2", "usage or input error: bad flag, unreadable or malformed input file, two outputs "
                                "on one file; an output not written when no verdict failed"),
                          ("3", "inconclusive: a probe that was asked for could not run or its evidence was not "
                                "good enough to judge")):
        out.append(f".TP\n.B {code}\n{roff(meaning)}")
    out.append(".PP\nA failing verdict (1) outranks an output not written (2), which outranks an inconclusive "
               "result (3).")

    files = [(args.schema_dir, "JSON Schemas of the results document (check \\-o) and the fleet document"),
             (args.units_dir and f"{args.units_dir}/pcieval-check.service",
              "nightly acceptance run, started by pcieval-check.timer (not enabled on install)"),
             (args.libexec_dir and f"{args.libexec_dir}/pcieval-check.sh",
              "the service's command: results and history in /var/lib/pcieval, metrics in "
              "/var/lib/prometheus/node-exporter only when that folder exists"),
             (args.libexec_dir and f"{args.libexec_dir}/pcieval-nhc.sh",
              "Slurm HealthCheckProgram: drains the node on exit 1"),
             (args.examples_dir, "the NHC check pcieval.nhc and the Kubernetes Job pcieval-job.yaml"),
             (args.doc_dir, "README.md, the guides in docs/ (checks, verdicts and threshold profiles, reports, "
                            "fleets, installation) and the simulated node's scenario format in sim/")]
    files = [(path, text) for path, text in files if path]
    if files:
        out.append(".SH FILES")
        for path, text in files:
            out.append(f".TP\n.I {roff(path)}\n{text}")
    out.append(".SH SEE ALSO\n.BR pcieval-mpi (1)")
    return out


def mpi_page(args):
    return [f'.TH PCIEVAL-MPI 1 "{page_date()}" "pcieval {args.version}" "User Commands"',
            ".SH NAME", "pcieval-mpi \\- the MPI build of pcieval, for fleet runs",
            ".SH SYNOPSIS", ".B mpirun", "[\\fIMPI OPTIONS\\fR] \\fBpcieval check\\fR [\\fIOPTIONS\\fR]",
            ".SH DESCRIPTION",
            "pcieval itself never links the MPI library. When \\fBpcieval check\\fR finds it was started by "
            "mpirun or srun, it checks that this node can load the MPI library and replaces itself with "
            "\\fBpcieval-mpi\\fR from its own directory, which runs the check as one node of the fleet: rank 0 "
            "collects every node's results (\\fB\\-\\-fleet\\-output\\fR, \\fB\\-\\-fleet\\-html\\fR) and an NCCL "
            "all-reduce over every GPU of every node follows. Run \\fBpcieval\\fR, not \\fBpcieval-mpi\\fR: "
            "the options and exit codes are those of \\fBpcieval check\\fR.",
            ".SH SEE ALSO\n.BR pcieval (1)"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary")
    parser.add_argument("--mpi", action="store_true", help="write pcieval-mpi(1)")
    parser.add_argument("--version", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--schema-dir")
    parser.add_argument("--units-dir")
    parser.add_argument("--libexec-dir")
    parser.add_argument("--examples-dir")
    parser.add_argument("--doc-dir", help="where the package installs README.md, docs/ and sim/README.md")
    args = parser.parse_args()
    if not args.mpi and not args.binary:
        parser.error("--binary is needed for pcieval(1)")
    text = "\n".join(mpi_page(args) if args.mpi else pcieval_page(args)) + "\n"
    with open(args.out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9,
                                                   mtime=0) as page:
        page.write(text.encode())


if __name__ == "__main__":
    main()
