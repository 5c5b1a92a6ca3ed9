"""zero_analyze --plot: the file parses as XML (SVG namespace) and every panel
has one 'bar params' rect per rank per run, and one 'bar time' per rank per
timed run. Usage: check_svg.py ZERO_ANALYZE FIXTURES_DIR"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

analyze, fixtures = sys.argv[1], sys.argv[2]
NS = "{http://www.w3.org/2000/svg}"
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "plot.svg")
    runs = [os.path.join(fixtures, r) for r in ("cmp_base", "cmp_new", "plan_tiny")]
    subprocess.run([analyze, *runs, "--plot", out], check=True, stdout=subprocess.DEVNULL)
    root = ET.parse(out).getroot()  # raises on malformed XML
    assert root.tag == NS + "svg", f"root element is {root.tag}, expected svg"
    panels = [g for g in root.iter(NS + "g") if g.get("class") == "panel"]
    expected = {("2", "Tiny"): (3 * 2, 2 * 2), ("4", "Tiny"): (4, 4)}  # (params bars, time bars)
    found = {}
    for p in panels:
        rects = [r.get("class") for r in p.iter(NS + "rect")]
        found[(p.get("data-world-size"), p.get("data-model"))] = (rects.count("bar params"), rects.count("bar time"))
    assert found == expected, f"bars per panel: expected {expected}, got {found}"
    legend = [t.text for g in root.iter(NS + "g") if g.get("class") == "legend" for t in g.iter(NS + "text")]
    assert legend == ["cmp_base", "cmp_new", "plan_tiny"], f"legend: {legend}"
print("svg ok:", found)
