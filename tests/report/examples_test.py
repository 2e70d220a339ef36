#!/usr/bin/env python3
"""The example documents of results_schema/examples/ say what pcieval says:

- `pcieval validate` of each node example gives exactly the verdicts, overall
  and summary the file holds (the pages quote them as pcieval's output);
- scripts/regenerate-examples.py, run again into a scratch folder, writes
  every example as committed: the fleet document included, whose nodes' verdicts
  come from validate of the generated node documents.

Run scripts/regenerate-examples.py after a rule change, then update the pages
that quote the examples (docs/verdicts.md, docs/reports.md, docs/fleet.md).

  examples_test.py PCIEVAL SOURCE_DIR BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile


def verdicts(document):
    return [json.dumps(v, sort_keys=True) for v in document["verdicts"]]


def short(verdict):
    return f"{verdict['subject']} {verdict['status']} [{verdict['code']}]"


def main():
    pcieval, source_dir, build_dir = sys.argv[1:4]
    examples = os.path.join(source_dir, "results_schema", "examples")
    failures = []
    node_examples = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in sorted(os.listdir(examples)):
            if not name.endswith(".json"):
                continue
            path = os.path.join(examples, name)
            with open(path, encoding="utf-8") as f:
                document = json.load(f)
            if document.get("kind") == "pcieval-fleet":
                continue
            node_examples.append(name)
            out = os.path.join(scratch, name)
            done = subprocess.run([pcieval, "validate", "-q", path, "-o", out], capture_output=True, text=True)
            if done.returncode not in (0, 1, 3) or not os.path.exists(out):
                failures.append(f"{name}: validate exit {done.returncode}: {done.stderr.strip()}")
                continue
            with open(out, encoding="utf-8") as f:
                judged = json.load(f)
            # Whole verdicts, reasons included; told by subject, status and code.
            missing = [short(v) for v in judged["verdicts"] if json.dumps(v, sort_keys=True) not in verdicts(document)]
            extra = [short(v) for v in document["verdicts"] if json.dumps(v, sort_keys=True) not in verdicts(judged)]
            if missing or extra or len(judged["verdicts"]) != len(document["verdicts"]):
                failures.append(f"{name}: the file holds {len(document['verdicts'])} verdicts, validate gives "
                                f"{len(judged['verdicts'])}; validate's not in the file: {missing}; the file's not "
                                f"from validate: {extra}")
            for field in ("overall", "summary"):
                if judged[field] != document[field]:
                    failures.append(f"{name}: {field} is {document[field]!r}, validate gives {judged[field]!r}")
            expected_exit = {"pass": 0, "fail": 1, "inconclusive": 3}[document["overall"]]
            if done.returncode != expected_exit:
                failures.append(f"{name}: validate exit {done.returncode}, the file's overall is {document['overall']}")
        if not node_examples:
            failures.append(f"no node example in {examples}")

        regenerated = os.path.join(scratch, "regenerated")
        done = subprocess.run([sys.executable, os.path.join(source_dir, "scripts", "regenerate-examples.py"),
                               "-b", build_dir, "--out", regenerated], capture_output=True, text=True)
        if done.returncode != 0:
            failures.append(f"regenerate-examples.py exit {done.returncode}: {done.stderr.strip()}")
        else:
            for name in sorted(os.listdir(regenerated)):
                with open(os.path.join(regenerated, name), encoding="utf-8") as f:
                    again = json.load(f)
                with open(os.path.join(examples, name), encoding="utf-8") as f:
                    committed = json.load(f)
                if again != committed:
                    differ = sorted(k for k in set(again) | set(committed) if again.get(k) != committed.get(k))
                    failures.append(f"{name}: regenerate-examples.py writes it otherwise (fields {differ}): run "
                                    "scripts/regenerate-examples.py and commit the examples")

    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    if failures:
        return 1
    print(f"examples: validate reproduces the verdicts of {len(node_examples)} node documents; "
          "regenerating changes no example")
    return 0


if __name__ == "__main__":
    sys.exit(main())
