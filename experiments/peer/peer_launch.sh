# shellcheck shell=bash
# Sourced by experiments/peer's scripts (after ../common/bench_env.sh, which
# brings zb_mpirun): zb_peer_mpirun RANKS LOG ARGS... launches the peer
# (ARGS: mpirun's options, then the command) on a free port of 127.0.0.1,
# exporting MASTER_ADDR, MASTER_PORT and THP_MEM_ALLOC_ENABLE to every rank.
# The port is picked below the kernel's ephemeral range, free when tried: a port
# bound as "any" (mpirun's own listener, say) comes from that range, so none can
# take it before rank 0 listens on it, where a port from the range could be
# (mpirun took one, and the peer's other rank waited on mpirun's socket for
# ever). Should another program bind it all the same (EADDRINUSE in LOG), it
# picks again, up to three times. Any other failure shows LOG and ends the
# script.
zb_peer_mpirun() {
  local ranks=$1 log=$2 attempt
  shift 2
  export MASTER_ADDR=127.0.0.1 THP_MEM_ALLOC_ENABLE="${THP_MEM_ALLOC_ENABLE:-0}"
  for attempt in 1 2 3; do
    MASTER_PORT="$("$ZB_VENV/bin/python" - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for port in random.sample(range(max(1024, low - 8192), low), 200):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    print(port)
    break
else:
    raise SystemExit(f"peer_launch.sh: no free port below the ephemeral range ({low})")
PY
)"
    export MASTER_PORT
    zb_mpirun "$ranks" -x MASTER_ADDR -x MASTER_PORT -x THP_MEM_ALLOC_ENABLE "$@" >"$log" 2>&1 && return 0
    if [ "$attempt" = 3 ] || ! grep -q EADDRINUSE "$log"; then cat "$log" >&2; exit 1; fi
  done
}

# One allocator policy on both sides (../common/heap_policy.sh says why):
# allocations served from the heap, never trimmed. ZB_PEER_GLIBC_DYNAMIC=1
# leaves glibc's default; a threshold, mmap count or malloc tunables of the
# user's own are kept as they are (MALLOC_MMAP_THRESHOLD_=33554432 with the
# same trim threshold was this policy before). Set before any launch, so every
# rank of either side inherits it.
source "$(dirname "${BASH_SOURCE[0]}")/../common/heap_policy.sh"
[ "${ZB_PEER_GLIBC_DYNAMIC:-0}" = 1 ] || zb_heap_policy

# zb_peer_python: the venv's python, with the peer's model libraries
# (torchvision and transformers, pinned; they build the peer's real modules)
# installed into the venv when missing.
zb_peer_python() {
  local py="$ZB_VENV/bin/python"
  if ! "$py" -c 'import torchvision, transformers' 2>/dev/null; then
    zb_log "installing torchvision and transformers into $ZB_VENV (the peer's models)"
    "$py" -m pip install -q --disable-pip-version-check "torch==$ZB_TORCH_VERSION" torchvision==0.29.2 \
      transformers==5.23.0 >&2 || return 1  # set -e does not reach inside $(zb_peer_python)
  fi
  echo "$py"
}

# zb_peer_regenerate_line SCRIPT VAR...: a record's "Regenerate:" line: the
# allocator settings both sides ran under, each named variable that is set,
# then the command.
zb_peer_regenerate_line() {
  local script=$1 settings var
  shift
  settings="$(zb_allocator_env ZB_PEER_GLIBC_DYNAMIC)"
  for var in "$@"; do
    [ -z "${!var:-}" ] || settings+="$var=\"${!var}\" "
  done
  echo "Regenerate: \`${settings}bash $script\`"
}
