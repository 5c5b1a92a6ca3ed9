"""zero_analyze --html in a real browser: headless Chromium renders the page of
four fixture runs (plan-only and timed, one with a gradient reduction) to a
PNG with the network cut off; the page must load nothing from outside, log
its own line ('zero-bench report rendered: 4 figures, ...') and no error,
and the PNG must be the window's size, not blank, and show the runs' colours.
Usage: check_html_render.py ZERO_ANALYZE FIXTURES_DIR [KEEP_PNG]
Needs Debian's chromium and python3-pil (scripts/setup.sh installs both)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

WIDTH, HEIGHT = 1200, 1800
RUN_COLOURS = {"cmp_base": (0x44, 0x77, 0xAA), "cmp_new": (0xEE, 0x66, 0x77), "plan_tiny": (0x22, 0x88, 0x33)}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    fail("no chromium on PATH: scripts/setup.sh installs Debian's chromium")


def main():
    analyze, fixtures = sys.argv[1], sys.argv[2]
    try:
        from PIL import Image
    except ImportError:
        fail(f"{sys.executable} has no PIL: install Debian's python3-pil (scripts/setup.sh does)")
    with tempfile.TemporaryDirectory() as tmp:
        page, png = os.path.join(tmp, "report.html"), os.path.join(tmp, "report.png")
        runs = [os.path.join(fixtures, r) for r in ("cmp_base", "cmp_new", "plan_tiny", "grad_sync_tiny")]
        subprocess.run([analyze, *runs, "--html", page], check=True, stdout=subprocess.DEVNULL)
        html = open(page, encoding="utf-8").read()
        outside = re.findall(r'(?:src|href)\s*=\s*"(?!#)[^"]*"|url\(|@import|<link\b|<script\s+src', html)
        if outside:
            fail(f"the page refers to outside resources: {outside[:5]}")
        result = subprocess.run(
            [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
             f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}", "file://" + page],
            capture_output=True, text=True, timeout=120, cwd=tmp)
        console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
        if result.returncode != 0 or not os.path.exists(png):
            fail(f"chromium exited {result.returncode} without a screenshot:\n{result.stderr[-3000:]}")
        if not any("zero-bench report rendered: 4 figures" in line for line in console):
            fail(f"the page did not log its rendered line; console: {console}")
        errors = [line for line in console if "rendered:" not in line]
        if errors:
            fail(f"the page logged: {errors}")
        image = Image.open(png).convert("RGB")
        if image.size != (WIDTH, HEIGHT):
            fail(f"screenshot is {image.size}, expected {(WIDTH, HEIGHT)}")
        colours = image.getcolors(maxcolors=WIDTH * HEIGHT)
        counts = {rgb: n for n, rgb in colours}
        white = counts.get((255, 255, 255), 0) / (WIDTH * HEIGHT)
        if len(colours) < 50 or white > 0.97:
            fail(f"screenshot looks blank: {len(colours)} colours, {100 * white:.1f} % white")
        for run, rgb in RUN_COLOURS.items():
            if counts.get(rgb, 0) < 40:
                fail(f"run {run}'s colour {rgb} covers {counts.get(rgb, 0)} pixels; its marks did not render")
        if len(sys.argv) > 3:
            shutil.copy(png, sys.argv[3])
        print(f"html render ok: {image.size}, {len(colours)} colours, {100 * white:.1f} % white, console: {console}")


main()
