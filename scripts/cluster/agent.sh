#!/usr/bin/env bash
# Open MPI's launch agent for local_cluster.sh (--mca plm_rsh_agent), in place of ssh.
# Called as `agent.sh [ssh options] HOST COMMAND...`: HOST is a node's address or name; the
# command (a shell line, as ssh would send it) runs under /bin/sh inside that node's namespaces.
# Like sshd, it starts from a fresh environment, not mpirun's: a variable the ranks on other
# hosts need must be forwarded (mpirun -x NAME), as on a real cluster. ZBC_AGENT_KEEP_ENV=1
# keeps mpirun's environment instead.
set -euo pipefail
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # ssh-style options: none apply
[ $# -ge 2 ] || { echo "agent.sh: needs a host and a command" >&2; exit 255; }
host=$1; shift
cluster="$(dirname "${BASH_SOURCE[0]}")/local_cluster.sh"
if [ "${ZBC_AGENT_KEEP_ENV:-0}" = 1 ]; then
  exec "$cluster" exec "$host" /bin/sh -c "$*"
fi
exec env -i HOME="${HOME:-/root}" USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/sh \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  "$cluster" exec "$host" /bin/sh -c "$*"
