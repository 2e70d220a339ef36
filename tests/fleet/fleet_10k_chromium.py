#!/usr/bin/env python3
"""The fleet page of 10,000 nodes in a real browser: headless Chromium, with the
checks of tests/report/chromium_check.py (no console message, no network
request, sections in order).

The nodes are GENERATED DATA (bench/perf/fleet_docs.py): `pcieval check` of the HGX
A100 8-GPU fixture machine copied to 9,990 nodes with three slow GPUs, and of
its variant whose GPU trained at x8 copied to 10 failing nodes. The merge must
take them in seconds, and the page must stay under PAGE_LIMIT_BYTES, load
within LOAD_LIMIT_S, list the 10 failing nodes before the 3 nodes with an
outlier GPU, count the 9,987 others as one kind, and draw the crowd as a
histogram with every outlier a red dot.

  fleet_10k_chromium.py PCIEVAL FIXTURES_DIR FLEET_DOCS_PY [SCREENSHOT_OUT]

Exit 0 on pass, 1 on a failure, 77 (ctest's SKIP_RETURN_CODE) without
chromium. SCREENSHOT_OUT receives the page's screenshot (docs/fleet-10k.png
is made so).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import chromium_check  # noqa: E402  (the shared browser checks)

PAGE_LIMIT_BYTES = 512 * 1024
LOAD_LIMIT_S = 60
FLEET_SECTIONS = ["verdict", "nodes", "outliers", "small-groups", "problems", "medians"]


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def check(pcieval, fixtures, name, out):
    machine = os.path.join(fixtures, name)
    subprocess.run([pcieval, "check", "--sysfs-root", os.path.join(machine, "sys"), "--topology-xml",
                    os.path.join(machine, "topology.xml"), "-q", "-o", out], capture_output=True)
    if not os.path.exists(out):
        fail("pcieval check wrote no document for the fixture %s" % name)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    pcieval, fixtures, fleet_docs = sys.argv[1:4]
    screenshot_out = sys.argv[4] if len(sys.argv) == 5 else None
    browser = chromium_check.find_chromium()
    if browser is None:
        print("SKIP: chromium not found (Debian: apt-get install chromium, or scripts/install-deps.sh --test)")
        return 77
    work = tempfile.mkdtemp(prefix="pcieval-fleet-10k-")
    try:
        good, x8 = os.path.join(work, "good.json"), os.path.join(work, "x8.json")
        check(pcieval, fixtures, "hgx_a100_8gpu_gen4", good)
        check(pcieval, fixtures, "hgx_a100_8gpu_gpu_x8", x8)
        nodes = os.path.join(work, "nodes")
        subprocess.run([sys.executable, fleet_docs, "--base", good, "--out", nodes, "--count", "9990", "--prefix",
                        "hgx-", "--slow", "17:2:21.0", "--slow", "4242:5:20.5", "--slow", "9000:7:19.9"], check=True)
        subprocess.run([sys.executable, fleet_docs, "--base", x8, "--out", nodes, "--count", "10", "--first", "9990",
                        "--prefix", "hgx-"], check=True)
        inputs = sorted(os.path.join(nodes, name) for name in os.listdir(nodes))
        if len(inputs) != 10000:
            fail("%d node documents generated, not 10000" % len(inputs))
        page = os.path.join(work, "fleet.html")
        started = time.monotonic()
        run = subprocess.run([pcieval, "fleet", "merge", "-q", "--html", page] + inputs, capture_output=True,
                             text=True)
        merge_s = time.monotonic() - started
        if run.returncode != 1 or not os.path.exists(page):
            fail("fleet merge --html exited %d (expected 1, failing nodes): %s" % (run.returncode, run.stderr[-2000:]))
        size = os.path.getsize(page)
        if size > PAGE_LIMIT_BYTES:
            fail("the 10,000-node page is %d bytes, over %d" % (size, PAGE_LIMIT_BYTES))

        started = time.monotonic()
        load = chromium_check.Load(browser, work, page)
        load_s = time.monotonic() - started
        if load_s > LOAD_LIMIT_S:
            fail("chromium took %.1f s to load the page, over %d s" % (load_s, LOAD_LIMIT_S))
        chromium_check.check_clean(load, "fleet-10k")
        chromium_check.check_order(load.dom, "fleet-10k", FLEET_SECTIONS)
        dom = load.dom
        for needle, what in (('<div class="result-word">FAIL</div>', "the fleet verdict word"),
                             ("<b>13 of 10,000 nodes need a look</b>", "the count of nodes that need a look"),
                             ('<table id="passing-kinds">', "the passing nodes by kind"),
                             ("<b>9,987</b>", "the 9,987 passing nodes without an outlier GPU"),
                             ('<rect class="density"', "the histogram of a crowded row")):
            if needle not in dom:
                fail("fleet-10k: no %s in the rendered page" % what)
        section = dom[dom.find('<section id="nodes"'):dom.find('<section id="outliers"')]
        table = section[section.find('<table id="node-table">'):section.find("</table>")]
        rows = [row.split("</td>")[0] for row in table.split('<tr><td class="mono">')[1:]]
        failing = ["hgx-%04d" % n for n in range(9990, 10000)]
        if rows != failing + ["hgx-0017", "hgx-4242", "hgx-9000"]:
            fail("fleet-10k: the node table lists %s, not the 10 failing nodes then the 3 outlier nodes" % rows)
        if dom.count('<circle class="dot outlier"') != 6:
            fail("fleet-10k: %d outlier dots, not 6 (3 GPUs, h2d and d2h)" % dom.count('<circle class="dot outlier"'))
        print("fleet-10k: merge %.1f s, page %d bytes, chromium load %.1f s; 13 nodes listed, 9,987 counted" %
              (merge_s, size, load_s))
        if screenshot_out:
            shot = os.path.join(work, "fleet.png")
            shot_load = chromium_check.Load(browser, work, page, screenshot=shot)
            chromium_check.check_clean(shot_load, "fleet-10k screenshot")
            chromium_check.check_png(shot)
            shutil.copyfile(shot, screenshot_out)
            print("screenshot written to %s" % screenshot_out)
        print("PASS")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
