#!/usr/bin/env bash
# Open MPI's launch agent for local_cluster.sh (--mca plm_rsh_agent), in place of ssh.
# Called as `agent.sh [ssh options] HOST COMMAND...`: HOST is a node's address or name; the
# command (a shell line, as ssh would send it) runs under /bin/sh inside that node's namespaces.
set -euo pipefail
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # ssh-style options: none apply
[ $# -ge 2 ] || { echo "agent.sh: needs a host and a command" >&2; exit 255; }
host=$1; shift
exec "$(dirname "${BASH_SOURCE[0]}")/local_cluster.sh" exec "$host" /bin/sh -c "$*"
