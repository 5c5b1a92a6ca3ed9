#!/usr/bin/env python3
"""Every Catch2 TEST_CASE name in tests/ is one CTest can run by name.

catch_discover_tests registers each test case under its name and runs it by that name: CTest reads a name
holding ';' as a list (it runs nothing and reports Passed), and an unmatched '[' or ']' as a bracket that
joins the names after it into one (CMake's lists), Catch one starting with '-' as an option. Usage:
check_test_names.py ROOT
"""
import pathlib
import re
import sys

NAME = re.compile(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"')


def brackets_match(name: str) -> bool:
    depth = 0
    for c in name:
        depth += {"[": 1, "]": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def main(root: str) -> int:
    bad = []
    files = sorted(pathlib.Path(root, "tests").rglob("*.cpp"))
    count = 0
    for path in files:
        for match in NAME.finditer(path.read_text(encoding="utf-8")):
            count += 1
            name = match.group(1)
            if ";" in name or not brackets_match(name) or name.startswith("-"):
                line = path.read_text(encoding="utf-8").count("\n", 0, match.start()) + 1
                bad.append(f"{path.relative_to(root)}:{line}: {name!r}")
    if count == 0:
        print(f"no TEST_CASE found under {root}/tests", file=sys.stderr)
        return 1
    for b in bad:
        print(f"a test name CTest cannot run (';' splits it, an unmatched bracket joins it to the next, a leading '-' is an option): {b}", file=sys.stderr)
    print(f"{count} test names checked, {len(bad)} unusable")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
