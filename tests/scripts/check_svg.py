"""zero_analyze --plot: the file parses as XML (SVG namespace); the imbalance
figure has a point per (run, W) of each model, the deviation figure a bar per
rank per run in each (W, model) panel, the phases figure a stacked bar per
rank per timed run, the memory figure DP and ZeRO-1/2/3 lines per run, and
the legend names the runs in order. Usage: check_svg.py ZERO_ANALYZE FIXTURES_DIR"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

analyze, fixtures = sys.argv[1], sys.argv[2]
NS = "{http://www.w3.org/2000/svg}"


def marks(panel, cls):
    return [e for e in panel.iter() if e.get("class") == cls]


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "plot.svg")
    runs = [os.path.join(fixtures, r) for r in ("cmp_base", "cmp_new", "plan_tiny")]
    subprocess.run([analyze, *runs, "--plot", out], check=True, stdout=subprocess.DEVNULL)
    root = ET.parse(out).getroot()  # raises on malformed XML
    assert root.tag == NS + "svg", f"root element is {root.tag}, expected svg"
    panels = {}
    for g in root.iter(NS + "g"):
        kind = (g.get("class") or "").split()
        if len(kind) == 2 and kind[0] == "panel":
            panels[(kind[1], g.get("data-world-size"), g.get("data-model"))] = g
    found = {key: (len(marks(p, "point imbalance")) + len(marks(p, "bar deviation")) + len(marks(p, "bar phase")) +
                   len(marks(p, "line memory"))) for key, p in panels.items()}
    expected = {("imbalance", None, "Tiny"): 1 + 2 + 1,  # base W=2, new W=2 and 4, plan_tiny W=2
                ("deviation", "2", "Tiny"): 3 * 2, ("deviation", "4", "Tiny"): 4,
                ("phases", "2", "Tiny"): 2 * 2 * 2, ("phases", "4", "Tiny"): 4 * 2,  # step + sync per rank
                ("memory", "2", "Tiny"): 3 * 4, ("memory", "4", "Tiny"): 4}
    assert found == expected, f"marks per panel: expected {expected}, got {found}"
    for p in panels.values():
        for bar in marks(p, "bar deviation"):
            assert bar.get("data-run") in ("cmp_base", "cmp_new", "plan_tiny") and bar.get("data-rank"), bar.attrib
    legend = [t.text for g in root.iter(NS + "g") if g.get("class") == "legend" for t in g.iter(NS + "text")]
    assert legend == ["cmp_base", "cmp_new", "plan_tiny"], f"legend: {legend}"
    swatches = [r.get("fill") for g in root.iter(NS + "g") if g.get("class") == "legend" for r in g.iter(NS + "rect")]
    assert swatches == ["#4477aa", "#ee6677", "#228833"], f"legend colours: {swatches}"
    for p in panels.values():  # every run's marks in the run's legend colour
        for mark in p.iter():
            run = mark.get("data-run")
            if not run or mark.get("data-stage") == "DP":  # DP is grey: it does not depend on the plan
                continue
            colour = mark.get("stroke") if mark.get("fill") in (None, "none") else mark.get("fill")
            assert colour == swatches[["cmp_base", "cmp_new", "plan_tiny"].index(run)], (run, mark.attrib)
print("svg ok:", found)
