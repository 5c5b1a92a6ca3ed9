# shellcheck shell=bash
# Sourced by the scripts that launch ranks: mpirun refuses root unless told,
# and needs --oversubscribe for more ranks than cores.
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
zb_mpirun() {  # zb_mpirun RANKS ARGS...
  local ranks="$1"; shift
  local extra=()
  [ "$ranks" -gt "$(nproc)" ] && extra+=(--oversubscribe)
  mpirun "${extra[@]}" -np "$ranks" "$@"
}
zb_gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; }
