"""Reads zero-bench rank records from a run directory in either layout:
a plan-only case file <Model>_<W>.json (schema 2: the shared context once,
each rank's result in rank order) or one <Model>_<W>_<rank>.json per rank
(timed runs, and plan-only runs of schema 1)."""
import json
from pathlib import Path


def case_records(run_dir, model, world_size):
    """Every rank's {"context", "result"} of one case, in rank order."""
    run_dir = Path(run_dir)
    case_file = run_dir / f"{model}_{world_size}.json"
    if case_file.exists():
        doc = json.loads(case_file.read_text())
        return [{"context": dict(doc["context"], rank=rank), "result": result}
                for rank, result in enumerate(doc["ranks"])]
    return [json.loads((run_dir / f"{model}_{world_size}_{rank}.json").read_text()) for rank in range(world_size)]
