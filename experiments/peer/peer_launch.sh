# shellcheck shell=bash
# Sourced by experiments/peer's scripts (after ../common/bench_env.sh, which
# brings zb_mpirun): zb_peer_mpirun RANKS LOG ARGS... launches the peer
# (ARGS: mpirun's options, then the command) on a free port of 127.0.0.1,
# exporting MASTER_ADDR, MASTER_PORT and THP_MEM_ALLOC_ENABLE to every rank.
# The port is picked, freed, then listened on by rank 0, so another process can
# take it between; then (EADDRINUSE in LOG) it picks again, up to three times.
# Any other failure shows LOG and ends the script.
zb_peer_mpirun() {
  local ranks=$1 log=$2 attempt
  shift 2
  export MASTER_ADDR=127.0.0.1 THP_MEM_ALLOC_ENABLE="${THP_MEM_ALLOC_ENABLE:-0}"
  for attempt in 1 2 3; do
    MASTER_PORT="$("$ZB_VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    export MASTER_PORT
    zb_mpirun "$ranks" -x MASTER_ADDR -x MASTER_PORT -x THP_MEM_ALLOC_ENABLE "$@" >"$log" 2>&1 && return 0
    if [ "$attempt" = 3 ] || ! grep -q EADDRINUSE "$log"; then cat "$log" >&2; exit 1; fi
  done
}
