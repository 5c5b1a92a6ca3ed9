"""Reads zero-bench rank records from a run directory in either layout:
a plan-only case file <Model>_<W>.json (schema 2: the shared context once,
each rank's result in rank order) or one <Model>_<W>_<rank>.json per rank
(timed runs, and plan-only runs of schema 1). A case file's "ranks" is a list
of results, or, where the ranks differ only in a few numbers, columns:
{"count": W, "shared": the result every rank shares, "columns": {field: one
value per rank}}."""
import json
from pathlib import Path


def case_records(run_dir, model, world_size):
    """Every rank's {"context", "result"} of one case, in rank order."""
    run_dir = Path(run_dir)
    case_file = run_dir / f"{model}_{world_size}.json"
    if case_file.exists():
        doc = json.loads(case_file.read_text())
        return [{"context": dict(doc["context"], rank=rank), "result": result}
                for rank, result in enumerate(rank_results(doc["ranks"]))]
    return [json.loads((run_dir / f"{model}_{world_size}_{rank}.json").read_text()) for rank in range(world_size)]


def rank_results(ranks):
    """Each rank's result from a case file's "ranks", in either form."""
    if isinstance(ranks, list):
        return ranks
    columns = ranks["columns"]
    for key, values in columns.items():
        if len(values) != ranks["count"]:
            raise ValueError(f"ranks.columns.{key} holds {len(values)} values for {ranks['count']} ranks")
    results = [dict(ranks["shared"], **{key: values[rank] for key, values in columns.items()})
               for rank in range(ranks["count"])]
    for result in results:
        result["shard_count"] = result["param_count"]  # the rows form's derived count
    return results
