#!/usr/bin/env bash
# local_cluster.sh up 2 --slurm end to end: munge, slurmctld on node1 and a slurmd in each node's
# namespaces; one partition of both nodes with their CPUs; srun places tasks on both hosts; the PMI
# plugins srun offers; down leaves no daemon, mount or state behind. Exits 77 (CTest: skipped),
# saying why, where this machine cannot host the cluster or has no Slurm.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cluster="$repo/scripts/cluster/local_cluster.sh"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "the rehearsal cluster needs root"
[ ! -e /run/zb-cluster/config ] || skip "a rehearsal cluster is already up (/run/zb-cluster); run '$cluster down' first"
# The cluster's daemons name their files under /run/zb-cluster/slurm (a system munged or slurmd, which
# Debian's packages may have started, is not ours); a step's slurmstepd is "slurmstepd: [J.S]".
daemons() { { pgrep -f 'zb-cluster/slurm' || true; pgrep -x slurmstepd || true; } | xargs; }

trap '"$cluster" down >/dev/null 2>&1 || true' EXIT
expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
  [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
  echo "ok: $1"
}

rc=0; "$cluster" up 2 --slurm || rc=$?
[ "$rc" = 77 ] && skip "local_cluster.sh cannot bring Slurm up on this machine (its message is above)"
[ "$rc" = 0 ] || fail "up 2 --slurm exited $rc"

expect_eq "the partition: both nodes idle with 2 CPUs" "node1 zbc* idle 2
node2 zbc* idle 2" "$("$cluster" slurm sinfo -h -N -o '%N %P %T %c')"
for k in 1 2; do
  pid=$(cat "/run/zb-cluster/slurm/node$k/slurmd.pid")
  expect_eq "node$k's slurmd runs in node$k's network namespace" \
    "$("$cluster" exec "node$k" readlink /proc/self/ns/net)" "$(readlink "/proc/$pid/ns/net")"
done
# shellcheck disable=SC2016  # the task's shell expands them
expect_eq "srun -N 2 --ntasks-per-node 2: tasks, hosts and node-local ids" "0 node1 0
1 node1 1
2 node2 0
3 node2 1" "$("$cluster" slurm srun -N 2 --ntasks-per-node 2 sh -c 'echo $SLURM_PROCID $(hostname) $SLURM_LOCALID' | sort)"
mpi_list="$("$cluster" slurm srun --mpi=list 2>&1)"
echo "srun --mpi=list: $(echo "$mpi_list" | tr '\n\t' '  ')"
grep -qx '[[:space:]]*pmix' <<<"$mpi_list" || fail "srun --mpi=list offers no pmix: $mpi_list"
echo "ok: srun offers pmix"
"$cluster" status | grep -q '^slurm: ' || fail "status says nothing of Slurm"

"$cluster" down || fail "down exited $?"
trap - EXIT
expect_eq "no Slurm or munge daemon left" "" "$(daemons)"
[ ! -e /run/zb-cluster ] || fail "down left /run/zb-cluster"
! grep -q zbc-cgroup /proc/mounts || fail "down left a mount: $(grep zbc-cgroup /proc/mounts)"
echo "ok: down leaves nothing behind"
