#!/usr/bin/env python3
"""results/README.md's index lists every committed record, and every record it lists exists.

    check_results_index.py SOURCE_DIR

A record is: each run directory directly under results/ (the seed's greedy/ and
greedy_sorted/), each file and directory directly under results/bench/ and
results/baselines/, and each directory under results/gpu/ that holds a README.md
(a GPU run). results/local/ is the user's own, git-ignored. A link to a
directory's README.md stands for the directory. Exits 1 naming what is missing.
"""
import re
import sys
from pathlib import Path

GROUPS = ("bench", "baselines", "gpu")


def records(results):
    found = set()
    for entry in results.iterdir():
        if entry.name in ("local", "README.md") or entry.name.startswith("."):
            continue
        if entry.name not in GROUPS:
            found.add(entry.name)
    for group in ("bench", "baselines"):
        for entry in (results / group).iterdir():
            if not entry.name.startswith("."):
                found.add(f"{group}/{entry.name}")
    for readme in (results / "gpu").rglob("README.md"):
        found.add(str(readme.parent.relative_to(results)))
    return found


def listed(readme):
    text = readme.read_text()
    start = text.find("## Index of the committed records")
    if start < 0:
        sys.exit(f"{readme}: no '## Index of the committed records' section")
    end = text.find("\n## ", start + 1)
    links = re.findall(r"\]\(([^)#]+)\)", text[start:end if end > 0 else len(text)])
    out = set()
    for link in links:
        link = link.rstrip("/")
        out.add(link[: -len("/README.md")] if link.endswith("/README.md") else link)
    return out


def main():
    root = Path(sys.argv[1]) / "results"
    have, index = records(root), listed(root / "README.md")
    problems = [f"results/{r} is committed but not in results/README.md's index" for r in sorted(have - index)]
    problems += [f"results/README.md's index lists results/{r}, which does not exist" for r in sorted(index)
                 if not (root / r).exists()]
    problems += [f"results/README.md's index lists results/{r}, which is not a record (a run, a bench or "
                 "baselines entry, a GPU run with a README.md)" for r in sorted(index - have) if (root / r).exists()]
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"results/README.md's index: {len(index)} records, every one present, none missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
