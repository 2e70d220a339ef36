#!/usr/bin/env python3
"""Hands pcieval's HTML report to a real browser: headless Chromium (Debian's
chromium package) loads each page, dumps the DOM it built and takes a
screenshot, with its console and a network log recorded. A page passes when
the browser rendered its main parts (the verdict first, the topology tree, the
measurement table, the SVG charts, the evidence), logged no console message
(no script error, no refused resource) and requested nothing from the network.

Pages: `pcieval report EXAMPLE --html` of a results document from
results_schema/examples (the real command on a real document), the probed
sample with a size sweep (render_sample_report html), and a sample whose
hostname and GPU name carry markup (html-hostile), which must stay text.

Before that, the checks are run on a page that breaks both rules (a script
error and an image fetched by URL), and must catch both: a check that cannot
fail proves nothing.

  chromium_check.py PCIEVAL RENDER_SAMPLE_REPORT EXAMPLE_JSON [SCREENSHOT_OUT]
  chromium_check.py --fleet PCIEVAL EXAMPLES_DIR FLEET_DOCS_PY

--fleet checks the fleet page instead: bench/perf/fleet_docs.py makes six node
documents (GENERATED DATA) from the L40S example, one GPU slow, and
`pcieval fleet merge ... --html` renders them with the downgraded H100
example under a hostname that carries markup. The page must show its fleet
verdict first, the node table, the outlier, the strip plot and keep the
hostname as text.

Exit 0 when every page passes, 1 on a failure, 77 (ctest's SKIP_RETURN_CODE)
when no chromium is installed. SCREENSHOT_OUT, when given, receives the
screenshot of the example's report (docs/report-example.png is made so).
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

WIDTH, HEIGHT = 1280, 2400
# Chromium's own background traffic (component updates, sync, time) is
# switched off where a flag allows; whatever is left has no page initiator
# and is told apart below.
FLAGS = [
    "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--no-first-run", "--no-default-browser-check",
    "--disable-features=Translate,OptimizationHints,MediaRouter,SpellCheck",
    "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000",
]
SECTIONS = ["verdict", "topology", "measurements", "curves", "samples", "evidence"]
FLEET_SECTIONS = ["verdict", "nodes", "outliers", "small-groups", "problems", "medians"]


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Load:
    """One headless load of a page: its DOM, console lines and page requests."""

    def __init__(self, browser, work, page, screenshot=None):
        profile = tempfile.mkdtemp(dir=work)
        netlog = os.path.join(work, os.path.basename(page) + ".netlog.json")
        args = [browser] + FLAGS + ["--user-data-dir=" + profile, "--log-net-log=" + netlog]
        if screenshot:
            args += ["--screenshot=" + screenshot, "--window-size=%d,%d" % (WIDTH, HEIGHT)]
        else:
            args += ["--dump-dom"]
        run = subprocess.run(args + ["file://" + page], capture_output=True, text=True, timeout=120,
                             errors="replace")
        if run.returncode != 0:
            fail("chromium exited %d on %s: %s" % (run.returncode, page, run.stderr[-2000:]))
        self.dom = run.stdout
        self.console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
        self.requests = page_requests(netlog, "file://" + page)


def page_requests(netlog, page_url):
    """URLs the page asked the network for: requests with a page initiator
    (the browser's own carry "not an origin")."""
    try:
        with open(netlog, encoding="utf-8", errors="replace") as f:
            log = json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read chromium's net log %s: %s" % (netlog, e))
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log.get("events", []):
        params = event.get("params") or {}
        if event.get("type") != start_job or "url" not in params:
            continue
        if params.get("initiator") == "not an origin" or params["url"] == page_url:
            continue
        urls.append(params["url"])
    return urls


def check_clean(load, name):
    if load.console:
        fail("%s: console messages (script error or refused resource):\n  %s" % (name, "\n  ".join(load.console)))
    if load.requests:
        fail("%s: the page requested %s" % (name, ", ".join(sorted(set(load.requests)))))


def check_order(dom, name, sections):
    positions = []
    for section in sections:
        at = dom.find('<section id="%s"' % section)
        if at < 0:
            fail("%s: the rendered page has no section %s" % (name, section))
        positions.append(at)
    if positions != sorted(positions):
        fail("%s: sections out of order (verdict first): %s" % (name, positions))


def check_structure(dom, name):
    check_order(dom, name, SECTIONS)
    if 'class="result-word"' not in dom:
        fail("%s: no overall result word in the verdict section" % name)
    if '<ul class="tree">' not in dom:
        fail("%s: no topology tree" % name)
    if '<table id="measurement-table">' not in dom:
        fail("%s: no measurement table" % name)
    if dom.count('<svg class="chart"') < 1:
        fail("%s: no SVG chart" % name)


def check_png(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail("screenshot %s is not a PNG" % path)
    width, height = struct.unpack(">II", head[16:24])
    if (width, height) != (WIDTH, HEIGHT):
        fail("screenshot is %dx%d, not %dx%d" % (width, height, WIDTH, HEIGHT))
    # A blank page compresses to a few kilobytes; text, tables and charts do not.
    size = os.path.getsize(path)
    if size < 50_000:
        fail("screenshot is %d bytes: the page looks empty" % size)
    return size


def self_test(browser, work):
    """The checks must see a script error and a fetch when there are some."""
    bad = os.path.join(work, "broken.html")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title></head><body>'
                '<img src="http://127.0.0.1:9/pixel.png"><script>not_defined_anywhere();</script></body></html>')
    load = Load(browser, work, bad)
    if not any("not_defined_anywhere" in line for line in load.console):
        fail("self-test: the script error of a broken page was not seen in the console log")
    if "http://127.0.0.1:9/pixel.png" not in load.requests:
        fail("self-test: the image fetch of a broken page was not seen in the net log")
    print("self-test: a script error and a network fetch are detected")


def fleet_main(pcieval, examples, fleet_docs):
    browser = find_chromium()
    if browser is None:
        print("SKIP: chromium not found (Debian: apt-get install chromium, or scripts/install-deps.sh --test)")
        return 77
    print(subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip())
    work = tempfile.mkdtemp(prefix="pcieval-chromium-fleet-")
    try:
        self_test(browser, work)
        nodes = os.path.join(work, "nodes")
        subprocess.run([sys.executable, fleet_docs, "--base", os.path.join(examples, "pass-1gpu-l40s-genoa.json"),
                        "--out", nodes, "--count", "6", "--prefix", "l40s-", "--slow", "2:0:20.0"], check=True)
        with open(os.path.join(examples, "fail-downgraded-h100-spr.json"), encoding="utf-8") as f:
            hostile = json.load(f)
        hostile["host"]["hostname"] = ("<script>document.title='pwned'</script>"
                                       "<img src=\"http://127.0.0.1:9/host.png\">")
        with open(os.path.join(nodes, "hostile.json"), "w", encoding="utf-8") as f:
            json.dump(hostile, f)
        page = os.path.join(work, "fleet.html")
        inputs = sorted(os.path.join(nodes, name) for name in os.listdir(nodes))
        run = subprocess.run([pcieval, "fleet", "merge"] + inputs + ["-q", "--html", page],
                             capture_output=True, text=True)
        if run.returncode != 1 or not os.path.exists(page):
            fail("pcieval fleet merge --html exited %d (expected 1, a failing node): %s" % (run.returncode, run.stderr))
        load = Load(browser, work, page)
        check_clean(load, "fleet")
        check_order(load.dom, "fleet", FLEET_SECTIONS)
        dom = load.dom
        for needle, what in (('<div class="result-word">FAIL</div>', "the fleet verdict word"),
                             ("7 nodes</b>: 6 pass, 1 fail, 0 inconclusive", "the node counts"),
                             ('<table id="node-table">', "the node table"),
                             ('<table id="outlier-table">', "the outlier table"),
                             ('<svg class="strip"', "a strip plot"),
                             ('<circle class="dot outlier"', "the outlier's dot"),
                             ('<line class="median"', "a group median"),
                             ("&lt;script&gt;document.title", "the hostname's markup as text")):
            if needle not in dom:
                fail("fleet: no %s in the rendered page" % what)
        nodes = dom[dom.find('<section id="nodes"'):dom.find('<section id="outliers"')]
        if nodes.count('<tr><td class="mono">') != 7:
            fail("fleet: the node table has %d rows, not 7" % nodes.count('<tr><td class="mono">'))
        outliers = dom[dom.find('<section id="outliers"'):dom.find('<section id="small-groups"')]
        if outliers.count('<td class="mono">l40s-2</td>') != 2:
            fail("fleet: the slow GPU of l40s-2 is not the outlier of h2d_ce and d2h_ce")
        for element in ("<script", "<img"):
            if element in dom:
                fail("fleet: the document's text became a %s> element" % element)
        print("fleet: verdict, %d nodes, outlier and %d strip plot(s) rendered; markup stayed text" %
              (7, dom.count('<svg class="strip"')))
        print("PASS")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--fleet":
        return fleet_main(*sys.argv[2:5])
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    pcieval, render, example = sys.argv[1:4]
    screenshot_out = sys.argv[4] if len(sys.argv) == 5 else None
    browser = find_chromium()
    if browser is None:
        print("SKIP: chromium not found (Debian: apt-get install chromium, or scripts/install-deps.sh --test)")
        return 77
    version = subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip()
    print(version)

    work = tempfile.mkdtemp(prefix="pcieval-chromium-")
    try:
        self_test(browser, work)

        # The real command on a real results document.
        report = os.path.join(work, "report.html")
        run = subprocess.run([pcieval, "report", example, "--html", report], capture_output=True, text=True)
        if run.returncode != 0:
            fail("pcieval report exited %d: %s" % (run.returncode, run.stderr))
        load = Load(browser, work, report)
        check_clean(load, "example")
        check_structure(load.dom, "example")
        shot = os.path.join(work, "report.png")
        shot_load = Load(browser, work, report, screenshot=shot)
        check_clean(shot_load, "example screenshot")
        size = check_png(shot)
        if screenshot_out:
            shutil.copyfile(shot, screenshot_out)
        print("example: %s rendered, %d charts, screenshot %dx%d %d bytes" %
              (os.path.basename(example), load.dom.count('<svg class="chart"'), WIDTH, HEIGHT, size))

        # The probed sample: a size sweep gives a bandwidth curve with its budget line.
        sample = os.path.join(work, "sample.html")
        with open(sample, "wb") as f:
            f.write(subprocess.run([render, "html"], capture_output=True, check=True).stdout)
        load = Load(browser, work, sample)
        check_clean(load, "sample")
        check_structure(load.dom, "sample")
        curves = load.dom[load.dom.find('<section id="curves"'):load.dom.find('<section id="samples"')]
        if 'aria-label="0000:17:00.0 h2d (host to device)"' not in curves or 'class="reference"' not in curves:
            fail("sample: no bandwidth curve with its budget line for 0000:17:00.0 h2d")
        print("sample: sweep curve and budget line rendered")

        # Markup in the document stays text: no element comes from it.
        hostile = os.path.join(work, "hostile.html")
        with open(hostile, "wb") as f:
            f.write(subprocess.run([render, "html-hostile"], capture_output=True, check=True).stdout)
        load = Load(browser, work, hostile)
        check_clean(load, "hostile")
        for element in ("<script", "<img", "<b>&amp;"):
            if element in load.dom:
                fail("hostile: the document's text became a %s> element" % element)
        if load.dom.count("<style") != 1:
            fail("hostile: a <style> element came from the document's text")
        if "&lt;script&gt;document.title" not in load.dom:
            fail("hostile: the hostname's markup is not shown as text")
        print("hostile: markup from the document stayed text")
        print("PASS")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
