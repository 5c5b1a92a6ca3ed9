"""zero_analyze --html at cluster scale: the page of a plan-only sweep of three
partitioners (greedy, lpt, flat), ResNet50 and BERT, W = 2 ... 16,384 (24,574
rank records a run) stays under 5 MB, lists a case of more than 256 ranks by
its quantile ranks (least, 25 %, median, 75 %, most elements), draws at most
four points per pixel column in any line, and renders in headless Chromium
(network cut off), logging its own line and no error. How long it takes to
render is recorded by experiments/html_scale, not asserted here.
Usage: check_html_at_scale.py ZERO_BENCH ZERO_ANALYZE
Needs Debian's chromium (scripts/setup.sh installs it)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MOST_BYTES = 5 * 1024 * 1024
WORLD_SIZES = [str(2 ** k) for k in range(1, 15)]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    bench, analyze = sys.argv[1], sys.argv[2]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        fail("no chromium on PATH: scripts/setup.sh installs Debian's chromium")
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for p in ("greedy", "lpt", "flat"):
            runs.append(os.path.join(tmp, p))
            subprocess.run([bench, "--plan-only", p, *WORLD_SIZES, "--models", "ResNet50,BERT", "-o", runs[-1]],
                           check=True, stdout=subprocess.DEVNULL)
        page = os.path.join(tmp, "report.html")
        subprocess.run([analyze, *runs, "--html", page], check=True, stdout=subprocess.DEVNULL)
        size = os.path.getsize(page)
        if size >= MOST_BYTES:
            fail(f"the page is {size} bytes, over {MOST_BYTES}")
        html = open(page, encoding="utf-8").read()
        for quantile in ("least", "25 %", "median", "75 %", "most"):
            want = f"({quantile} of 16384)"
            if html.count(want) != 2 * 3 * 2:  # memory and comm tables x 3 runs x 2 models
                fail(f"'{want}' appears {html.count(want)} times, expected 12 (2 tables x 3 runs x 2 models)")
        if re.search(r"<td>16383</td>", html):
            fail("a case of 16384 ranks lists its last rank: its rows were not cut to quantiles")
        widest = max(len(points.split()) for points in re.findall(r'points="([^"]*)"', html))
        if widest > 4 * 1200:
            fail(f"a line draws {widest} points, more than four per pixel column of the page")
        png = os.path.join(tmp, "report.png")
        result = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0", "--window-size=1200,1800",
             f"--screenshot={png}", "file://" + page], capture_output=True, text=True, timeout=120, cwd=tmp)
        console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
        if result.returncode != 0 or not os.path.exists(png):
            fail(f"chromium exited {result.returncode} without a screenshot:\n{result.stderr[-3000:]}")
        if not any("zero-bench report rendered" in line for line in console):
            fail(f"the page did not log its rendered line; console: {console}")
        print(f"html at scale ok: {size} bytes, widest line {widest} points, console: {console}")


main()
