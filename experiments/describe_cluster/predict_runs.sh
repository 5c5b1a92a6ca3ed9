# Sourced by run.sh and large_calls.sh beside it. predict_runs WORK BACKEND RUNS NAME...: each run directory
# WORK/runs/MODEL/RUNS (a glob ending in /) predicted on each description WORK/NAME/cluster.json by $A, laid
# out as describe_table.py reads it: WORK/predicted/NAME/BACKEND/MODEL/RUN, a link to the run, with
# RUN.predict.json beside it.
predict_runs() {
  local work=$1 backend=$2 runs=$3 name dir model at
  shift 3
  for name in "$@"; do
    # shellcheck disable=SC2086  # RUNS is a glob
    for dir in "$work"/runs/*/$runs; do
      dir=${dir%/} model=$(basename "$(dirname "$dir")")
      at="$work/predicted/$name/$backend/$model"
      mkdir -p "$at"
      ln -sfn "$dir" "$at/$(basename "$dir")"
      "$A" "$dir" --predict "$work/$name/cluster.json" --format json >"$at/$(basename "$dir").predict.json"
    done
  done
}
