#!/usr/bin/env bash
# local_cluster.sh: a rehearsal cluster of real "hosts" on this one machine (root only).
#   up N [--rate 2gbit] [--delay 100us] [--slots 2] [--slurm]   nodes node1..nodeN at 10.77.0.K (eth0)
#   hostfile | exec NODE CMD... | mpirun ARGS... | link NODE down|up|slow D|slow default
#   slurm CMD... (srun, sbatch, squeue, scancel, scontrol, sinfo on node1; after up --slurm)
#   kill NODE | status | check [NODE NODE] | down
# ZB_CLUSTER_KEEPALIVE="2 1 3": the mpirun daemons' TCP keepalive (idle s, interval s, probes); default off.
# ZB_CLUSTER_MPI_YIELD=1: Open MPI's mpi_yield_when_idle for the ranks (0: they spin while waiting).
# ZB_CLUSTER_RTO_MIN=5ms: TCP's minimum retransmission timeout between the nodes (Linux's own: 200ms).
# Each node has its own network and UTS namespace (hostname nodeK) and an eth0 (veth) on a
# bridge in the namespace zbc-switch; nothing touches the host's own interfaces. Each direction
# of a node's link is shaped to --rate (tbf); what a node sends waits --delay on its way out
# (this kernel has no netem: tc redirects it to a TAP where a zbc-wire process, wire.c, holds
# it). So one way between nodes is --delay, a round trip 2x. `link NODE slow D` sets that
# node's outgoing delay to D. --slurm: a Slurm controller on node1 and a slurmd on every node,
# one partition of them all (slurm.sh). Exit 77: this machine cannot host namespaces or TAPs
# (or, with --slurm, Slurm).
set -euo pipefail

readonly STATE=/run/zb-cluster
readonly SWITCH_NS=zbc-switch
readonly SUBNET=10.77.0
readonly SKIP=77
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE

die() { echo "local_cluster: $*" >&2; exit 1; }
skip() { echo "local_cluster: $*" >&2; exit "$SKIP"; }
usage() { sed -n '2,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
# shellcheck source=scripts/cluster/slurm.sh
. "$HERE/slurm.sh"

# --- checks ------------------------------------------------------------------------------------
need_root() { [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, TAP devices, tc)"; }
need_tools() {
  local t
  for t in ip tc nsenter unshare cc; do
    command -v "$t" >/dev/null || skip "needs '$t', which is not installed"
  done
}
probe_namespaces() {
  unshare --net --uts true 2>/dev/null || skip "cannot create network and UTS namespaces here"
  [ -c /dev/net/tun ] || skip "no /dev/net/tun, so no TAP devices for the nodes' links"
}
need_cluster() { [ -f "$STATE/config" ] || die "no cluster is up (run: $0 up N)"; }

# --- state -------------------------------------------------------------------------------------
# config: "NODES RATE DELAY_NS SLOTS"
read_config() { read -r NODES RATE DELAY_NS SLOTS <"$STATE/config"; }
node_ns() { echo "zbc-node$1"; }
uts_file() { echo "$STATE/node$1.uts"; }

# node_index nodeK|10.77.0.K|K -> K, checked against the cluster's size
node_index() {
  local arg=$1 k
  case "$arg" in
    node[0-9]*) k=${arg#node} ;;
    "$SUBNET".[0-9]*) k=${arg#"$SUBNET".} ;;
    *) k=$arg ;;
  esac
  if ! [[ "$k" =~ ^[0-9]+$ ]] || [ "$((10#$k))" -lt 1 ] || [ "$((10#$k))" -gt "$NODES" ]; then
    die "unknown node '$arg' (this cluster has node1..node$NODES)"
  fi
  echo "$((10#$k))"
}

# to_ns 100us|0.5ms|20ms|1s -> nanoseconds
to_ns() {
  [[ "$1" =~ ^([0-9]+(\.[0-9]+)?)(ns|us|ms|s)$ ]] || die "bad delay '$1' (e.g. 100us, 20ms)"
  awk -v v="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[3]}" \
    'BEGIN { m = (u == "ns") ? 1 : (u == "us") ? 1e3 : (u == "ms") ? 1e6 : 1e9; printf "%d\n", v * m }'
}
# to_bps 2gbit|500mbit -> bit/s (tc's units: k = 1000)
to_bps() {
  [[ "$1" =~ ^([0-9]+(\.[0-9]+)?)([kmgt]?)bit$ ]] || die "bad rate '$1' (e.g. 2gbit, 500mbit)"
  awk -v v="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[3]}" \
    'BEGIN { m = (u == "k") ? 1e3 : (u == "m") ? 1e6 : (u == "g") ? 1e9 : (u == "t") ? 1e12 : 1; printf "%d\n", v * m }'
}

# --- processes ---------------------------------------------------------------------------------
# pids_in_node K: every process in node K's network namespace or its UTS namespace
pids_in_node() {
  local k=$1 ns ino p
  ns=$(node_ns "$k")
  { [ -e "/run/netns/$ns" ] && ip netns pids "$ns" 2>/dev/null || true
    if mountpoint -q "$(uts_file "$k")" 2>/dev/null; then
      ino=$(stat -L -c %i "$(uts_file "$k")")
      for p in /proc/[0-9]*; do
        [ "$(readlink "$p/ns/uts" 2>/dev/null)" = "uts:[$ino]" ] && echo "${p#/proc/}"
      done
    fi
  } | sort -un | grep -vx -e "$$" -e "$BASHPID" || true
}
# kill_pids_of FUNC ARGS...: SIGKILL what FUNC lists until it lists nothing (forks included)
kill_pids_of() {
  local pids
  for _ in $(seq 50); do
    pids=$("$@")
    [ -z "$pids" ] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  die "processes survive SIGKILL ($*): $pids"
}
switch_pids() { if [ -e "/run/netns/$SWITCH_NS" ]; then ip netns pids "$SWITCH_NS" 2>/dev/null || true; fi; }

# --- the switch and the nodes ------------------------------------------------------------------
ensure_netns() {
  ip netns list | awk '{print $1}' | grep -qx "$1" || ip netns add "$1"
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$1" link set lo up
}
ensure_switch() {
  ensure_netns "$SWITCH_NS"
  ip -n "$SWITCH_NS" link show br0 >/dev/null 2>&1 || ip -n "$SWITCH_NS" link add br0 type bridge
  ip -n "$SWITCH_NS" link set br0 up
}
ensure_uts() {  # a persistent UTS namespace, bind-mounted on a file, named nodeK
  local k=$1 f
  f=$(uts_file "$k")
  if mountpoint -q "$f" 2>/dev/null; then
    nsenter --uts="$f" hostname "node$k"
  else
    touch "$f"
    unshare --uts="$f" hostname "node$k"
  fi
}
ensure_tap() {  # ensure_tap NETNS NAME: a persistent TAP that the wire attaches to
  ip -n "$1" link show "$2" >/dev/null 2>&1 || ip -n "$1" tuntap add dev "$2" mode tap vnet_hdr
  ip -n "$1" link set "$2" up
}
ensure_veth() {  # node K's eth0, its peer vethK on the bridge
  local k=$1 ns
  ns=$(node_ns "$k")
  if ! ip -n "$ns" link show eth0 >/dev/null 2>&1; then
    ip -n "$SWITCH_NS" link del "veth$k" 2>/dev/null || true
    ip -n "$SWITCH_NS" link add "veth$k" type veth peer name eth0 netns "$ns"
  fi
  ip -n "$SWITCH_NS" link set "veth$k" master br0 up
}
# shape NETNS DEV: tbf at the cluster's rate. The bucket holds a whole 64 KiB GSO frame (so
# they pass unsplit) and the queue 2 ms of traffic, a switch-like buffer: deeper only bloats RTT.
shape() {
  local bps burst limit
  bps=$(to_bps "$RATE")
  burst=$(awk -v b="$bps" 'BEGIN { x = b / 8 * 200e-6; printf "%d\n", (x > 131072) ? x : 131072 }')
  limit=$(awk -v b="$bps" 'BEGIN { x = b / 8 * 2e-3; printf "%d\n", (x > 262144) ? x : 262144 }')
  tc -n "$1" qdisc replace dev "$2" root tbf rate "$RATE" burst "$burst" limit "$limit"
}
build_wire() {
  local bin=$STATE/zbc-wire
  if [ ! -x "$bin" ] || [ "$HERE/wire.c" -nt "$bin" ]; then
    cc -O2 -Wall -pthread -o "$bin.tmp" "$HERE/wire.c" || die "cannot build $HERE/wire.c"
    mv "$bin.tmp" "$bin"
  fi
}
wire_alive() {
  local pid
  pid=$(cat "$STATE/node$1.wire.pid" 2>/dev/null) || return 1
  grep -q zbc-wire "/proc/$pid/cmdline" 2>/dev/null
}
# set_delay K NS: node K's outgoing delay; (re)starts its wire
set_delay() {
  local k=$1
  echo "$2" >"$STATE/node$k.delay"
  if wire_alive "$k"; then
    kill -HUP "$(cat "$STATE/node$k.wire.pid")"
    return
  fi
  rm -f "$STATE/node$k.wire.ready"
  # (Real-time priority for the wire was tried: in this VM it made every wake-up slower.)
  setsid "$STATE/zbc-wire" "/run/netns/$(node_ns "$k")" wire0 "/run/netns/$SWITCH_NS" "wire$k" \
    "$STATE/node$k.delay" "$STATE/node$k.wire.ready" </dev/null >>"$STATE/node$k.wire.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$STATE/node$k.wire.pid"
  for _ in $(seq 50); do
    [ -e "$STATE/node$k.wire.ready" ] && return 0
    # Alive, not yet "a wire": until the forked shell has exec'd zbc-wire its command line is this script's.
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  die "node$k's wire did not start: $(tail -n 1 "$STATE/node$k.wire.log" 2>/dev/null)"
}
ensure_node() {
  local k=$1 ns
  ns=$(node_ns "$k")
  ensure_netns "$ns"
  ensure_uts "$k"
  ensure_veth "$k"
  ensure_tap "$ns" wire0
  ensure_tap "$SWITCH_NS" "wire$k"
  ip -n "$ns" addr replace "$SUBNET.$k/24" dev eth0
  ip -n "$ns" link set eth0 up
  # TCP between nodes retransmits after 5 ms at the least, not Linux's 200 ms: the shaped links
  # drop what their queues do not hold, and at 200 ms a many-to-one burst stalled calls across
  # nodes (mpi at 1 Gbit/s: a 2 MiB broadcast on 4 ranks 172 ms, 34 ms with 5 ms). Datacenters
  # lower it the same way.
  ip -n "$ns" route replace "$SUBNET.0/24" dev eth0 scope link rto_min "${ZB_CLUSTER_RTO_MIN:-5ms}"
  # What the node sends enters the bridge from wireK, what it receives leaves through vethK: the
  # bridge must not learn the node's address on wireK, nor flood frames into it.
  ip -n "$SWITCH_NS" link set "wire$k" master br0
  bridge -n "$SWITCH_NS" link set dev "wire$k" learning off flood off mcast_flood off bcast_flood off
  bridge -n "$SWITCH_NS" fdb replace "$(ip -n "$ns" -br link show eth0 | awk '{print $3}')" \
    dev "veth$k" master static
  # Everything eth0 sends goes to wire0 (its delay) before any qdisc of eth0's: shape there.
  tc -n "$ns" qdisc replace dev eth0 clsact
  tc -n "$ns" filter replace dev eth0 egress protocol all pref 1 handle 800::800 u32 match u32 0 0 \
    action mirred egress redirect dev wire0
  shape "$ns" wire0
  shape "$SWITCH_NS" "veth$k"
  set_delay "$k" "$DELAY_NS"
}
remove_node() {
  local k=$1 ns f
  ns=$(node_ns "$k")
  kill_pids_of pids_in_node "$k"
  if wire_alive "$k"; then kill -KILL "$(cat "$STATE/node$k.wire.pid")" 2>/dev/null || true; fi
  ip -n "$SWITCH_NS" link del "wire$k" 2>/dev/null || true
  ip -n "$SWITCH_NS" link del "veth$k" 2>/dev/null || true
  if [ -e "/run/netns/$ns" ]; then
    ip -n "$ns" link del wire0 2>/dev/null || true
    ip -n "$ns" link del eth0 2>/dev/null || true
    ip netns del "$ns"
  fi
  f=$(uts_file "$k")
  if mountpoint -q "$f" 2>/dev/null; then umount "$f"; fi
  rm -f "$f" "$STATE/node$k".*
}
existing_nodes() { ip netns list | awk '{print $1}' | sed -n 's/^zbc-node\([0-9][0-9]*\)$/\1/p'; }

write_hostfile() {
  local k
  for k in $(seq "$NODES"); do echo "$SUBNET.$k slots=$SLOTS"; done >"$STATE/hostfile"
}

# --- subcommands -------------------------------------------------------------------------------
cmd_up() {
  if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]] || [ "$((10#$1))" -lt 1 ] || [ "$((10#$1))" -gt 200 ]; then
    die "up needs a node count from 1 to 200"
  fi
  NODES=$((10#$1)); shift
  local rate=2gbit delay=100us slots=2 slurm=0 k
  while [ $# -gt 0 ]; do
    case "$1" in
      --slurm) slurm=1; shift ;;
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --delay) delay=${2:?--delay needs a value}; shift 2 ;;
      --slots) slots=${2:?--slots needs a value}; shift 2 ;;
      *) die "up: unknown option '$1'" ;;
    esac
  done
  [[ "$slots" =~ ^[1-9][0-9]*$ ]] || die "bad --slots '$slots'"
  RATE=$rate; DELAY_NS=$(to_ns "$delay"); SLOTS=$slots
  to_bps "$RATE" >/dev/null
  need_root; need_tools; probe_namespaces
  [ "$slurm" = 0 ] || slurm_need_tools
  mkdir -p "$STATE"
  build_wire
  ensure_switch
  for k in $(seq "$NODES"); do ensure_node "$k"; done
  for k in $(existing_nodes); do [ "$k" -le "$NODES" ] || remove_node "$k"; done
  echo "$NODES $RATE $DELAY_NS $SLOTS" >"$STATE/config"
  write_hostfile
  if [ "$slurm" = 1 ]; then
    slurm_up
  elif slurm_up_already; then
    slurm_down; rm -rf "$SLURM_DIR"
  fi
  echo "local_cluster: $NODES nodes up ($SUBNET.1-$NODES), $RATE and $delay one way between nodes" \
    "$([ "$slurm" = 1 ] && echo "; Slurm: partition zbc of node[1-$NODES], controller on node1")"
}

cmd_down() {
  need_root
  local k f
  slurm_down
  for k in $(existing_nodes); do remove_node "$k"; done
  for f in "$STATE"/node*.uts; do  # a UTS namespace whose network namespace is already gone
    [ -e "$f" ] || continue
    k=${f#"$STATE"/node}; k=${k%.uts}
    remove_node "$k"
  done
  kill_pids_of switch_pids
  if [ -e "/run/netns/$SWITCH_NS" ]; then ip netns del "$SWITCH_NS"; fi
  rm -rf "$STATE"
}

cmd_hostfile() { need_cluster; cat "$STATE/hostfile"; }

cmd_exec() {
  [ $# -ge 2 ] || die "exec needs a node and a command"
  need_cluster; read_config
  local k
  k=$(node_index "$1"); shift
  # ip netns exec (not nsenter --net) so that /sys/class/net inside the node shows its own eth0.
  exec nsenter --uts="$(uts_file "$k")" -- ip netns exec "$(node_ns "$k")" "$@"
}

cmd_mpirun() {
  need_cluster
  # Ranks on node1 inherit this environment; the agent starts the other nodes' daemons with a
  # fresh one, as sshd would, so variables they need must be forwarded with -x NAME.
  # The daemons' TCP keepalive, off by default (Open MPI's TIME <= 0): a short one (2 s idle + 3
  # probes 1 s apart) ends a job whose link was cut in about 5 s instead of minutes, but declares
  # live daemons lost on a link mpi keeps full (ResNet50's gradients at 1 Gbit/s, even at 30 s + 6
  # x 5 s) and on a busy machine (the test suite at a load of 4-18). ZB_CLUSTER_KEEPALIVE="TIME
  # INTERVAL PROBES" sets one: the tests that cut a link set "2 1 3".
  # The nodes' ranks share this machine's cores with the zbc-wire processes that carry their
  # links: a rank spinning in MPI_Wait starves the wire its own messages wait on (a 1 KiB
  # all-reduce across two nodes took 9-12 ms spinning, 0.24 ms yielding), so Open MPI's progress
  # yields the core while it waits (mpi_yield_when_idle, its setting for more ranks than cores);
  # ZB_CLUSTER_MPI_YIELD=0 spins, as on a node with a core per rank.
  local keepalive_time keepalive_intvl keepalive_probes
  read -r keepalive_time keepalive_intvl keepalive_probes <<<"${ZB_CLUSTER_KEEPALIVE:-0 1 3}"
  exec "$HERE/local_cluster.sh" exec node1 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --hostfile "$STATE/hostfile" \
    --mca plm_rsh_agent "$HERE/agent.sh" \
    --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 \
    --mca oob_tcp_keepalive_time "$keepalive_time" --mca oob_tcp_keepalive_intvl "$keepalive_intvl" \
    --mca oob_tcp_keepalive_probes "$keepalive_probes" \
    --mca mpi_yield_when_idle "${ZB_CLUSTER_MPI_YIELD:-1}" "$@"
}

cmd_slurm() {
  [ $# -ge 1 ] || die "slurm needs a command (srun, sbatch, squeue, scancel, scontrol, sinfo)"
  need_cluster
  slurm_up_already || die "this cluster has no Slurm (run: $0 up N --slurm)"
  slurm_client "$@"
}

cmd_link() {
  [ $# -ge 2 ] || die "link needs a node and down|up|slow D"
  need_root; need_cluster; read_config
  local k
  k=$(node_index "$1")
  case "$2" in
    # The cable pulled at the switch: the node's eth0 loses its carrier, frames both ways are lost.
    down) ip -n "$SWITCH_NS" link set "veth$k" down; ip -n "$SWITCH_NS" link set "wire$k" down ;;
    up) ip -n "$SWITCH_NS" link set "veth$k" up; ip -n "$SWITCH_NS" link set "wire$k" up ;;
    slow)
      [ $# -ge 3 ] || die "link NODE slow needs a delay (e.g. 20ms) or 'default'"
      if [ "$3" = default ]; then set_delay "$k" "$DELAY_NS"; else set_delay "$k" "$(to_ns "$3")"; fi ;;
    *) die "link: unknown action '$2' (down, up, slow D)" ;;
  esac
}

cmd_kill() {
  [ $# -eq 1 ] || die "kill needs a node"
  need_root; need_cluster; read_config
  kill_pids_of pids_in_node "$(node_index "$1")"
}

cmd_status() {
  need_cluster; read_config
  local k ns port delay wire
  echo "cluster: $NODES nodes, $RATE, $((DELAY_NS / 1000))us one way node to node, $SLOTS slots each"
  for k in $(seq "$NODES"); do
    ns=$(node_ns "$k")
    port=$(ip -n "$SWITCH_NS" -br link show "veth$k" 2>/dev/null | awk '{print $2}')
    delay=$(cat "$STATE/node$k.delay")
    wire=dead; wire_alive "$k" && wire=alive
    printf 'node%s  %s.%s  hostname %s  link %s  out delay %sus  wire %s  %s processes\n' \
      "$k" "$SUBNET" "$k" "$(nsenter --uts="$(uts_file "$k")" hostname)" "${port:-missing}" \
      "$((delay / 1000))" "$wire" "$(pids_in_node "$k" | grep -c . || true)"
    printf '      out: %s\n' "$(tc -n "$ns" qdisc show dev wire0 | head -n 1)"
    printf '      in:  %s\n' "$(tc -n "$SWITCH_NS" qdisc show dev "veth$k" | head -n 1)"
  done
  if slurm_up_already; then
    echo "slurm: $SLURM_DIR/slurm.conf (controller on node1)"
    slurm_client sinfo -N -o '%N %P %T %c %E' || true
  fi
}

# check [A B]: round trip and throughput A -> B against what the cluster was asked for (±10 %)
cmd_check() {
  need_cluster; read_config
  local a b expect_rtt_us rtt base bps expect_bps port=5201 py=/usr/bin/python3 out
  a=$(node_index "${1:-node1}"); b=$(node_index "${2:-node2}")
  expect_rtt_us=$((($(cat "$STATE/node$a.delay") + $(cat "$STATE/node$b.delay")) / 1000))
  out=$STATE/check.out
  "$0" exec "node$b" "$py" "$HERE/netcheck.py" serve "$port" >"$out" &
  for _ in $(seq 50); do grep -q ready "$out" && break; sleep 0.1; done
  # The probe's own cost (python, syscalls), measured on the node's unshaped loopback.
  base=$("$0" exec "node$b" "$py" "$HERE/netcheck.py" rtt 127.0.0.1 "$port" 200)
  rtt=$("$0" exec "node$a" "$py" "$HERE/netcheck.py" rtt "$SUBNET.$b" "$port" 200)
  bps=$("$0" exec "node$a" "$py" "$HERE/netcheck.py" send "$SUBNET.$b" "$port" 3)
  wait
  rm -f "$out"
  expect_bps=$(to_bps "$RATE")
  # tbf counts whole frames: TCP's payload is 1448 of each 1514 bytes on the wire.
  # The link's delay is judged on the fastest round trip: the median adds this machine's
  # scheduling noise (other work on the same cores), which no real link has.
  awk -v r="$rtt" -v base="$base" -v er="$expect_rtt_us" -v g="$bps" -v eb="$expect_bps" \
    -v a="$a" -v b="$b" 'BEGIN {
      split(r, rs, " "); split(base, bs, " ")
      wire = g * 1514 / 1448; net = rs[1] - bs[1]
      printf "node%s -> node%s: rtt min %.0f us, median %.0f us; the probe alone (loopback) min %.0f, median %.0f\n", a, b, rs[1], rs[2], bs[1], bs[2]
      printf "node%s -> node%s: link rtt %.0f us (min less the probe'"'"'s own; asked %d us)\n", a, b, net, er
      printf "node%s -> node%s: goodput %.3f Gbit/s = %.3f Gbit/s of frames (asked %.3f)\n", a, b, g / 1e9, wire / 1e9, eb / 1e9
      bad = 0
      if (er > 0 && (net < 0.9 * er || net > 1.1 * er)) { print "rtt is off by more than 10 %"; bad = 1 }
      if (wire < 0.9 * eb || wire > 1.1 * eb) { print "throughput is off by more than 10 %"; bad = 1 }
      exit bad }'
}

main() {
  [ $# -ge 1 ] || usage
  local cmd=$1; shift
  case "$cmd" in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    hostfile) cmd_hostfile "$@" ;;
    exec) cmd_exec "$@" ;;
    mpirun) cmd_mpirun "$@" ;;
    slurm) cmd_slurm "$@" ;;
    link) cmd_link "$@" ;;
    kill) cmd_kill "$@" ;;
    status) cmd_status "$@" ;;
    check) cmd_check "$@" ;;
    -h|--help|help) usage ;;
    *) die "unknown subcommand '$cmd' (up, hostfile, exec, mpirun, slurm, link, kill, status, check, down)" ;;
  esac
}
main "$@"
