#!/usr/bin/env python3
"""results/README.md's index lists every committed record, and every record it lists exists.

    check_results_index.py SOURCE_DIR

Records live in two trees:
- results/: each run directory directly under results/ (the seed's greedy/ and
  greedy_sorted/), each file and directory directly under results/baselines/,
  and each directory under results/gpu/ that holds a README.md (a GPU run).
  results/local/ is the user's own, git-ignored.
- experiments/: each experiment's folder experiments/<name>/, whose record is
  its README.md, and each directory inside it (the runs the record keeps).
  experiments/common/ holds the experiments' shared helpers and no record;
  experiments/README.md is their table. Each record's first lines name the
  command that regenerates it (a line "Regenerate: ..."), and the scripts that
  line names (experiments/... or scripts/..., .sh or .py) exist.

The index's links are relative to results/ (../experiments/<name>/ for an
experiment); a link to a directory's README.md stands for the directory.
Hidden entries and __pycache__ are no records. Exits 1 naming what is missing.
"""
import os
import re
import sys
from pathlib import Path

RESULTS_GROUPS = ("baselines", "gpu")
NOT_EXPERIMENTS = ("common",)
REGENERATE_WITHIN = 5  # the record's first lines
SCRIPT = re.compile(r"\b((?:experiments|scripts)/[\w./-]+\.(?:sh|py))\b")


def visible(entry):
    return not entry.name.startswith(".") and entry.name != "__pycache__"


def records(root):
    """Every record under results/ and experiments/, as a path relative to the checkout."""
    results, found = root / "results", set()
    for entry in filter(visible, results.iterdir()):
        if entry.name not in ("local", "README.md") + RESULTS_GROUPS:
            found.add(f"results/{entry.name}")
    found.update(f"results/baselines/{entry.name}" for entry in filter(visible, (results / "baselines").iterdir()))
    for readme in (results / "gpu").rglob("README.md"):
        found.add(str(readme.parent.relative_to(root)))
    experiments = root / "experiments"
    if experiments.is_dir():
        for folder in filter(visible, experiments.iterdir()):
            if folder.is_dir() and folder.name not in NOT_EXPERIMENTS:
                found.add(f"experiments/{folder.name}")
                found.update(f"experiments/{folder.name}/{d.name}" for d in filter(visible, folder.iterdir())
                             if d.is_dir())
    return found


def listed(readme, root):
    """The index's links, as paths relative to the checkout."""
    text = readme.read_text()
    start = text.find("## Index of the committed records")
    if start < 0:
        sys.exit(f"{readme}: no '## Index of the committed records' section")
    end = text.find("\n## ", start + 1)
    links = re.findall(r"\]\(([^)#]+)\)", text[start:end if end > 0 else len(text)])
    out = set()
    for link in links:
        link = link.rstrip("/")
        link = link[: -len("/README.md")] if link.endswith("/README.md") else link
        out.add(os.path.relpath(os.path.normpath(readme.parent / link), root))
    return out


def regenerate_problems(root, experiment):
    """An experiment's record: present, naming its command in its first lines, the scripts it names present."""
    record = root / experiment / "README.md"
    if not record.is_file():
        return [f"{experiment}/ has no README.md (its record)"]
    head = record.read_text().splitlines()[:REGENERATE_WITHIN]
    line = next((x for x in head if x.startswith("Regenerate:")), None)
    if line is None:
        return [f"{experiment}/README.md: no 'Regenerate: ...' line in its first {REGENERATE_WITHIN} lines"]
    return [f"{experiment}/README.md's Regenerate line names {s}, which does not exist"
            for s in SCRIPT.findall(line) if not (root / s).is_file()]


def main():
    root = Path(sys.argv[1]).resolve()
    have, index = records(root), listed(root / "results" / "README.md", root)
    problems = [f"{r} is committed but not in results/README.md's index" for r in sorted(have - index)]
    problems += [f"results/README.md's index lists {r}, which does not exist" for r in sorted(index)
                 if not (root / r).exists()]
    problems += [f"results/README.md's index lists {r}, which is not a record (a run, a baselines entry, a GPU run "
                 "with a README.md, an experiment or a directory of one)" for r in sorted(index - have)
                 if (root / r).exists()]
    for r in sorted(have):
        if r.startswith("experiments/") and r.count("/") == 1:
            problems += regenerate_problems(root, r)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"results/README.md's index: {len(index)} records, every one present, none missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
