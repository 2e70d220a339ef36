#!/usr/bin/env python3
"""Parses pcieval's JUnit XML with a real XML parser (expat, through
xml.etree) and checks the structure CI systems read: the counts on
<testsuites> and <testsuite> match their test cases, each test case has a
classname, a name and at most one outcome, failures and errors carry a
message, a type and text, skips a message, and the escaped text reads back as
it was meant. The verdict suite comes first; a second suite, "probes", holds
one test case per probe when the results list probes.

    junit_check.py RENDER_SAMPLE_REPORT

Renders the sample ("junit") and the sample whose text needs escaping and
repair ("junit-hostile"); exit 0 when both pass.
"""
import subprocess
import sys
import xml.etree.ElementTree as ET

OUTCOMES = ("failure", "error", "skipped")


def check(xml_bytes, mode):
    problems = []
    root = ET.fromstring(xml_bytes)  # raises on anything not well-formed
    if root.tag != "testsuites":
        return [f"root is <{root.tag}>, not <testsuites>"]
    suites = root.findall("testsuite")
    if not 1 <= len(suites) <= 2:
        problems.append(f"{len(suites)} test suites, expected the verdicts and at most the probes")
    if len(suites) == 2 and suites[1].get("name") != "probes":
        problems.append(f"second test suite is {suites[1].get('name')!r}, not 'probes'")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for index, suite in enumerate(suites):
        probes = index == 1
        cases = suite.findall("testcase")
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for name, count in counts.items():
            if suite.get(name) != str(count):
                problems.append(f"testsuite {suite.get('name')!r} {name}={suite.get(name)!r}, has {count}")
        for name in totals:
            totals[name] += counts[name]
        for case in cases:
            label = f"testcase {case.get('name')!r}"
            if not case.get("classname") or not case.get("name"):
                problems.append(f"{label}: classname or name missing")
            outcomes = [child for child in case if child.tag in OUTCOMES]
            if len(outcomes) > 1:
                problems.append(f"{label}: {len(outcomes)} outcomes")
            for outcome in outcomes:
                if outcome.tag == "skipped":
                    if not outcome.get("message"):
                        problems.append(f"{label}: <skipped> without a message")
                    continue
                if not outcome.get("message") or not outcome.get("type") or not (outcome.text or "").strip():
                    problems.append(f"{label}: <{outcome.tag}> without message, type or text")
                # Verdicts name their reason code, probes their key.
                needed = "probe: " if probes else "code: "
                if needed not in (outcome.text or ""):
                    problems.append(f"{label}: <{outcome.tag}> text does not hold {needed!r}")
    for name, count in totals.items():
        if root.get(name) != str(count):
            problems.append(f"testsuites {name}={root.get(name)!r}, has {count}")

    if mode == "junit":
        # The sample's probes: one failed, one skipped, two ran.
        if len(suites) != 2:
            problems.append("the sample lists probes but there is no probes suite")
        else:
            got = {key: suites[1].get(key) for key in ("tests", "failures", "errors", "skipped")}
            if got != {"tests": "4", "failures": "0", "errors": "1", "skipped": "1"}:
                problems.append(f"probes suite counts {got}")
            skipped = suites[1].find("testcase/skipped")
            if skipped is None or "shared" not in skipped.get("message", ""):
                problems.append("the skipped probe does not give its reason")

    names = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    if len(set(names)) != len(names):
        problems.append("two test cases share a classname and name")

    if mode == "junit-hostile":
        suite = suites[0]
        if suite.get("name") != 'pcieval "burn-in" & <more>':
            problems.append(f"suite name read back as {suite.get('name')!r}")
        failure = root.find("testsuite/testcase/failure")
        message = failure.get("message") if failure is not None else ""
        # CR, LF and tab survive attribute normalisation as references;
        # control characters, the overlong '/' and U+FFFE are U+FFFD.
        for expected in ('<b>&amp; "double" \'single\'\r\nnext\tline', "]]>", "\U0001F600"):
            if expected not in message:
                problems.append(f"failure message lacks {expected!r}: {message!r}")
        if any(ord(ch) < 0x20 and ch not in "\t\n\r" for ch in message):
            problems.append("a forbidden control character reached the message")
        text = failure.text if failure is not None else ""
        if "reseat & retrain\r\nthen <check>\ufffd" not in text:
            problems.append(f"failure text read back as {text!r}")
    return problems


def main():
    render = sys.argv[1]
    failed = False
    for mode in ("junit", "junit-hostile"):
        xml_bytes = subprocess.run([render, mode], check=True, capture_output=True).stdout
        try:
            problems = check(xml_bytes, mode)
        except ET.ParseError as error:
            problems = [f"not well-formed XML: {error}"]
        for problem in problems:
            print(f"FAIL {mode}: {problem}")
        failed = failed or bool(problems)
        if not problems:
            print(f"{mode}: well-formed, counts match ({len(xml_bytes)} bytes)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
