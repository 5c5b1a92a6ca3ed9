# shellcheck shell=bash
# slurm.sh: a real Slurm on the rehearsal cluster, sourced by local_cluster.sh (up N --slurm, slurm CMD...).
# Debian's slurm-wlm (22.05) and munge, started with state, logs and sockets under $STATE/slurm only:
#   munged        one, in this machine's namespaces, on its own socket and its own key (a cluster shares one key);
#   slurmctld     on node1 (10.77.0.1), which is also the login node: srun, sbatch, squeue, scancel, scontrol
#                 and sinfo run there (`local_cluster.sh slurm CMD...`), since the nodes' network is theirs alone;
#   slurmd        one per node, inside that node's network and UTS namespaces (its host name, nodeK, is its
#                 NodeName; NodeAddr=10.77.0.K), in a mount namespace of its own where
#                   /sys/fs/cgroup holds the named v1 hierarchy Slurm's cgroup/v1 plugin checks for (`ip netns
#                   exec` mounts a fresh /sys without it; proctrack/linuxproc and task/none use no cgroup), and
#                   $STATE/slurm/tmp is the node's own directory: Slurm's TmpFS, where the PMIx plugin puts
#                   each step's per-node files (on one shared /tmp two nodes' steps would collide).
# One partition, zbc, of every node with --slots CPUs each. No slurmdbd (it needs a MySQL server), so no
# sacct: each finished job's state (COMPLETED, CANCELLED, TIMEOUT, NODE_FAIL) and exit code go to
# $STATE/slurm/log/jobcomp.txt (jobcomp/filetxt), and `scontrol show job N` answers for 10 minutes after its end.

# shellcheck disable=SC2153  # STATE, NODES, SLOTS, SUBNET, HERE: local_cluster.sh's
readonly SLURM_DIR=$STATE/slurm
# KillWait: seconds between a job's SIGTERM and its SIGKILL (Slurm's default is 30; the tests hold every rank to it).
readonly SLURM_KILL_WAIT=10

slurm_need_tools() {
  local t
  for t in slurmctld slurmd srun sbatch scontrol munged munge; do
    command -v "$t" >/dev/null ||
      skip "needs '$t': Slurm is not installed here (apt-get install slurmctld slurmd slurm-client munge; scripts/setup.sh does)"
  done
}
slurm_up_already() { [ -f "$SLURM_DIR/slurm.conf" ]; }

slurm_write_config() {
  local last=$NODES
  cat >"$SLURM_DIR/slurm.conf" <<EOF
# The rehearsal cluster's Slurm (scripts/cluster/slurm.sh); every path under $SLURM_DIR.
ClusterName=zbc
SlurmctldHost=node1($SUBNET.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge/munge.socket
StateSaveLocation=$SLURM_DIR/ctld
SlurmdSpoolDir=$SLURM_DIR/%n/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/%n/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
TmpFS=$SLURM_DIR/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# The nodes share this machine's CPUs: each offers --slots CPUs whatever the hardware says.
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=$SLURM_KILL_WAIT
SlurmdTimeout=20
MinJobAge=600
JobCompType=jobcomp/filetxt
JobCompLoc=$SLURM_DIR/log/jobcomp.txt
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=node[1-$last] NodeAddr=$SUBNET.[1-$last] CPUs=$SLOTS State=UNKNOWN
PartitionName=zbc Nodes=node[1-$last] Default=YES MaxTime=INFINITE State=UP
EOF
  echo "CgroupPlugin=cgroup/v1" >"$SLURM_DIR/cgroup.conf"
}

slurm_start_munge() {
  mkdir -p "$SLURM_DIR/munge" "$SLURM_DIR/munge-key"
  chmod 755 "$SLURM_DIR/munge"
  chmod 700 "$SLURM_DIR/munge-key"
  head -c 1024 /dev/urandom >"$SLURM_DIR/munge-key/munge.key"
  chmod 400 "$SLURM_DIR/munge-key/munge.key"
  # --force: munged runs as root here (it prefers the munge user).
  munged --force --socket="$SLURM_DIR/munge/munge.socket" --key-file="$SLURM_DIR/munge-key/munge.key" \
    --log-file="$SLURM_DIR/log/munged.log" --pid-file="$SLURM_DIR/munge/munged.pid" \
    --seed-file="$SLURM_DIR/munge-key/munged.seed" ||
    die "munged did not start: $(tail -n 2 "$SLURM_DIR/log/munged.log" 2>/dev/null)"
  munge -S "$SLURM_DIR/munge/munge.socket" -n </dev/null | unmunge -S "$SLURM_DIR/munge/munge.socket" >/dev/null ||
    die "munge does not answer on $SLURM_DIR/munge/munge.socket"
}

slurm_start_slurmd() {  # node K's slurmd, in the node's namespaces and a mount namespace of its own
  local k=$1
  mkdir -p "$SLURM_DIR/node$k/spool" "$SLURM_DIR/node$k/tmp"
  # shellcheck disable=SC2016
  "$HERE/local_cluster.sh" exec "node$k" sh -c '
    set -e
    mount -t tmpfs -o mode=755 zbc-cgroup /sys/fs/cgroup
    mkdir /sys/fs/cgroup/systemd
    mount -t cgroup -o none,name=systemd zbc-cgroup /sys/fs/cgroup/systemd
    mount --bind "$1/node$2/tmp" "$1/tmp"
    exec slurmd -f "$1/slurm.conf"' zbc-slurmd "$SLURM_DIR" "$k" 2>>"$SLURM_DIR/log/slurmd-start.log" ||
    skip "node$k's slurmd cannot start here: $(tail -n 1 "$SLURM_DIR/log/slurmd-start.log") $(tail -n 1 "$SLURM_DIR/log/slurmd-node$k.log" 2>/dev/null)"
}

# slurm_client CMD ARGS: a Slurm command on node1, the login node.
slurm_client() { "$HERE/local_cluster.sh" exec node1 env SLURM_CONF="$SLURM_DIR/slurm.conf" "$@"; }

slurm_up() {
  slurm_need_tools
  if slurm_up_already; then slurm_down; fi
  mkdir -p "$SLURM_DIR/ctld" "$SLURM_DIR/log" "$SLURM_DIR/tmp"
  slurm_write_config
  slurm_start_munge
  local k state
  "$HERE/local_cluster.sh" exec node1 slurmctld -f "$SLURM_DIR/slurm.conf" ||
    die "slurmctld did not start: $(tail -n 2 "$SLURM_DIR/log/slurmctld.log" 2>/dev/null)"
  for k in $(seq "$NODES"); do slurm_start_slurmd "$k"; done
  for _ in $(seq 100); do  # every node registered and idle
    state=$(slurm_client sinfo -h -N -o '%N %T' 2>/dev/null || true)
    [ "$(grep -c ' idle$' <<<"$state")" = "$NODES" ] && return 0
    sleep 0.2
  done
  die "Slurm's nodes did not come up idle: ${state:-no answer from slurmctld} ($SLURM_DIR/log)"
}

# The daemons, by their pid files (each checked to be that daemon), all at once: SIGTERM, SIGKILL
# after 5 s. What else runs on a node (a job's steps) ends with the node (local_cluster.sh down
# kills every process of each node).
slurm_down() {
  local f pid pids=()
  for f in "$SLURM_DIR"/node*/slurmd.pid "$SLURM_DIR/slurmctld.pid" "$SLURM_DIR/munge/munged.pid"; do
    pid=$(cat "$f" 2>/dev/null) || continue
    grep -qE 'slurmd|slurmctld|munged' "/proc/$pid/cmdline" 2>/dev/null && pids+=("$pid")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  local alive
  for _ in $(seq 50); do
    alive=0
    for pid in "${pids[@]}"; do [ -e "/proc/$pid" ] && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}
