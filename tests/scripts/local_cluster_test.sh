#!/usr/bin/env bash
# scripts/cluster/local_cluster.sh end to end: up 2 (twice), hostfile, exec, an MPI program
# across both nodes through Open MPI's own launcher, kill, down, and nothing left behind.
# Exits 77 (CTest: skipped), saying why, where this machine cannot host the cluster.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cluster="$repo/scripts/cluster/local_cluster.sh"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "the rehearsal cluster needs root"
for tool in mpicc mpirun; do command -v "$tool" >/dev/null || skip "needs $tool (Open MPI)"; done
# A cluster someone brought up by hand is theirs: do not tear it down under them.
[ ! -e /run/zb-cluster/config ] || skip "a rehearsal cluster is already up (/run/zb-cluster); run '$cluster down' first"

tmp="$(mktemp -d)"
links_before="$(ip -br link | awk '{print $1}' | sort)"
cleanup() {
  "$cluster" down || echo "FAIL: down failed" >&2
  rm -rf "$tmp"
}
trap cleanup EXIT

expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
  [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
  echo "ok: $1"
}

# up, twice: the second finds everything in place and changes nothing.
rc=0; "$cluster" up 2 || rc=$?
[ "$rc" = 77 ] && skip "local_cluster.sh cannot build a cluster on this machine (its message is above)"
[ "$rc" = 0 ] || fail "up 2 exited $rc"
"$cluster" up 2 || fail "a second up 2 exited $?"

expect_eq "hostfile" "10.77.0.1 slots=2
10.77.0.2 slots=2" "$("$cluster" hostfile)"
expect_eq "node1's hostname" node1 "$("$cluster" exec node1 hostname)"
expect_eq "node2's hostname" node2 "$("$cluster" exec node2 hostname)"
expect_eq "a node named by its address" node2 "$("$cluster" exec 10.77.0.2 hostname)"
expect_eq "node2's interfaces" "eth0 10.77.0.2/24" \
  "$("$cluster" exec node2 ip -4 -br addr show dev eth0 | awk '{sub(/@.*/, "", $1); print $1, $3}')"

# Open MPI's launcher starts a daemon on node2 through the agent; the ranks talk over eth0.
cat >"$tmp/hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int rank, size, sum = 0;
  char host[256];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gethostname(host, sizeof host);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d on %s sum %d\n", rank, size, host, sum);
  MPI_Finalize();
  return 0;
}
EOF
mpicc -o "$tmp/hello" "$tmp/hello.c" || fail "mpicc could not build the MPI hello"
node2_rx_before="$("$cluster" exec node2 cat /sys/class/net/eth0/statistics/rx_bytes)"
out="$(timeout 60 "$cluster" mpirun -np 4 --map-by node "$tmp/hello")" || fail "mpirun across the nodes exited $?: $out"
echo "$out"
expect_eq "ranks and hosts" "rank 0 of 4 on node1 sum 6
rank 1 of 4 on node2 sum 6
rank 2 of 4 on node1 sum 6
rank 3 of 4 on node2 sum 6" "$(echo "$out" | sort)"
node2_rx_after="$("$cluster" exec node2 cat /sys/class/net/eth0/statistics/rx_bytes)"
[ "$node2_rx_after" -gt "$node2_rx_before" ] || fail "node2's eth0 received nothing during the MPI run"
echo "ok: node2's eth0 received $((node2_rx_after - node2_rx_before)) bytes during the MPI run"

# kill: every process of node2 goes, node1's stay.
"$cluster" exec node2 sleep 300 &
node2_job=$!
"$cluster" exec node1 sleep 300 &
node1_job=$!
for _ in $(seq 50); do
  [ -n "$(ip netns pids zbc-node2)" ] && [ -n "$(ip netns pids zbc-node1)" ] && break
  sleep 0.1
done
[ -n "$(ip netns pids zbc-node2)" ] || fail "the sleep in node2 did not start"
"$cluster" kill node2
expect_eq "processes left in node2 after kill" "" "$(ip netns pids zbc-node2)"
rc=0; wait "$node2_job" || rc=$?
expect_eq "exit status of node2's killed sleep" 137 "$rc"
[ -n "$(ip netns pids zbc-node1)" ] || fail "kill node2 also killed node1's processes"
echo "ok: node1's processes survived"
"$cluster" kill node1
wait "$node1_job" || true

# down, and nothing left: namespaces, links, mounts, state, processes.
trap - EXIT
"$cluster" down || fail "down exited $?"
"$cluster" down || fail "a second down exited $?"
rm -rf "$tmp"
expect_eq "namespaces left" "" "$(ip netns list | grep zbc- || true)"
expect_eq "host links after down" "$links_before" "$(ip -br link | awk '{print $1}' | sort)"
expect_eq "state directory left" "" "$(ls -d /run/zb-cluster 2>/dev/null || true)"
expect_eq "mounts left" "" "$(grep -e zbc- -e zb-cluster /proc/self/mountinfo || true)"
expect_eq "wire processes left" "" "$(ps -eo stat=,comm= | awk '$1 !~ /^Z/ && $2 == "zbc-wire"' || true)"
echo "local_cluster: all checks passed"
