# shellcheck shell=bash
# Sourced by the scripts that launch ranks: mpirun refuses root unless told,
# and needs --oversubscribe for more ranks than cores. Binding is chosen on
# purpose, not left to mpirun's default (one core per rank for np <= 2, which
# puts gloo's progress threads on the rank's own core and slows CPU syncs):
# ZB_BIND_TO (default none) is passed as --bind-to; every rank records the CPUs
# it may use (context.cpu_affinity) and zero_analyze prints them.
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
zb_mpirun() {  # zb_mpirun RANKS ARGS...
  local ranks="$1"; shift
  local extra=(--bind-to "${ZB_BIND_TO:-none}")
  [ "$ranks" -gt "$(nproc)" ] && extra+=(--oversubscribe)
  mpirun "${extra[@]}" -np "$ranks" "$@"
}
zb_gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; }
# A record's first facts: "HOST, N cores, kernel THP MODE," (the transparent
# huge page mode the kernel gives host memory, which moves CPU collectives).
zb_host_facts() {
  echo "$(hostname), $(nproc) cores, kernel THP $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled),"
}
