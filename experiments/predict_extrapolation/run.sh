#!/usr/bin/env bash
# W = 8 on the rehearsal cluster predicted from the collective tables of W = 2
# and 4 alone, against the same runs predicted from W = 8's own tables and
# against what they measured: experiments/predict_validation's committed inputs
# (runs, tables, step models), nothing launched. For each rate and backend the
# description of W = 8 is rewritten to read ranks4.txt (4 ranks on 2 nodes)
# for inter_node and ranks4_split2.txt (2-rank groups, 2 at once) for
# intra_node, so every call across nodes at W = 8 (8 ranks on 4 nodes, or a
# replica group of 4 ranks on 4 nodes) is the 4-rank table scaled by the
# library's model; the step model stays W = 8's (the step is not what is
# extrapolated). Writes record.md beside it (ZB_RECORD_OUT: elsewhere), with
# the zero_analyze built here (ZB_ANALYZE: another); tests/CMakeLists.txt
# remakes it and compares.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
inputs="$here/../predict_validation/inputs"
A="${ZB_ANALYZE:-$ZB_BUILD_DIR/zero_analyze}"
out="${ZB_RECORD_OUT:-$here/record.md}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for rate in 1gbit 4gbit; do
  mkdir -p "$work/$rate"
  tar -xJf "$inputs/$rate/runs.tar.xz" -C "$work/$rate"
  for backend in gloo mpi; do
    own="$inputs/$rate/$backend/w8.json"
    # W = 8's description with W = 4's tables, its paths made absolute (it is written elsewhere).
    python3 - "$own" "$work/$rate/$backend/from_w4.json" <<'PY'
import json, os, sys
own, out = sys.argv[1], sys.argv[2]
d = json.load(open(own))
base = os.path.dirname(os.path.abspath(own))
d["name"] += ", tables of W = 4 only"
d["step"]["cost_model"] = os.path.normpath(os.path.join(base, d["step"]["cost_model"]))
for tier in ("intra_node", "inter_node"):
    for entry in d[tier].values():
        entry["table"] = os.path.normpath(os.path.join(base, entry["table"].replace("ranks8", "ranks4")))
json.dump(d, open(out, "w"), indent=2)
PY
    for run in "$work/$rate/$backend"/*/*_W8*; do
      [ -d "$run" ] || continue
      "$A" "$run" --predict "$own" --format json >"$run.own.json"
      "$A" "$run" --predict "$work/$rate/$backend/from_w4.json" --format json >"$run.from_w4.json"
    done
  done
done
python3 "$here/extrapolation_table.py" "$work" >"$out"
echo "wrote $out"
