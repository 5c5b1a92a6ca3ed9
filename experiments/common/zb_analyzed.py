"""Reads one case of `zero_analyze --format json`: a phase's mean seconds on
the rank with the largest total (the text report's phases line), and a
communication phase's fraction of its raw collective (the comm roofline)."""

PHASE_SERIES = {"grad_sync": "grad_sync_mean_per_rank", "step": "step_mean_per_rank", "sync": "sync_mean_per_rank",
                "total": "total_mean_per_rank"}


def phase_seconds(case, phase):
    """Mean seconds of `phase` (grad_sync, step, sync or total) on the rank with the largest total."""
    return case[PHASE_SERIES[phase]][case["slowest_total_rank"]]


def fraction(case, phase):
    """The phase's fraction of its raw collective, or None where the case has no probe for it."""
    return next((x["fraction"] for x in case.get("comm_roofline", []) if x["phase"] == phase), None)


def cases_by_arm(paths, arms):
    """Rounds of an interleaved A/B bench, each `zero_analyze --format json` of runs named
    <configuration parts>_<arm>: {(*configuration parts, model, W): {arm: [that case, one a round]}}."""
    import json
    from collections import defaultdict
    cases = defaultdict(lambda: {arm: [] for arm in arms})
    for path in paths:
        with open(path) as f:
            runs = json.load(f)["runs"]
        for r in runs:
            *configuration, arm = r["run"].split("_")
            for c in r["cases"]:
                cases[(*configuration, c["model"], c["world_size"])][arm].append(c)
    return cases
