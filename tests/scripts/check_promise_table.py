#!/usr/bin/env python3
"""Every test that docs/bad_input_and_faults.md names exists among the Catch2 tests.

usage: check_promise_table.py DOC TESTS_DIR
A cell `prefix: name` names the Catch2 TEST_CASE("name"); the prefixes are
CTest's (unit, cli, trust, mpirun), or cluster for the cases of the program
zb_cluster_tests (one CTest test, cluster_zero_bench_across_hosts), or slurm for those of zb_slurm_tests
(slurm_zero_bench_under_slurm). Exits 1 listing the names not found.
"""
import pathlib
import re
import sys


def test_case_names(tests_dir):
    names = set()
    for source in pathlib.Path(tests_dir).rglob("*.cpp"):
        for match in re.finditer(r'TEST_CASE\("((?:[^"\\]|\\.)*)"', source.read_text()):
            names.add(match.group(1).replace('\\"', '"'))
    return names


def cited_names(doc):
    cited = []
    for cell in re.findall(r"`(unit|cli|trust|mpirun|cluster|slurm): ([^`]+)`", pathlib.Path(doc).read_text()):
        cited.append(cell[1].replace("\\|", "|"))
    return cited


def main():
    doc, tests_dir = sys.argv[1], sys.argv[2]
    cited = cited_names(doc)
    known = test_case_names(tests_dir)
    missing = [name for name in cited if name not in known]
    if not cited:
        print(f"{doc}: names no test")
        return 1
    for name in missing:
        print(f"{doc}: no TEST_CASE named {name!r}")
    print(f"{len(cited) - len(missing)} of {len(cited)} tests named in {doc} exist")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
