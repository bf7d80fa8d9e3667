#!/bin/bash
# Cluster capacity: the subscribers three Moat nodes carry against one, on one
# redis-server (password, loopback), every node with one worker. Rooms span
# nodes: every room's publisher is on n0, which owns every room (the other
# nodes drain, so placement puts rooms on n0); room r's N subscribers are on
# node r mod NODES, through a cascade link from n0 (WHEP ?edge=) when that is
# not n0. One moat-flood per room (one publisher, N subscribers that decrypt
# and count). The rooms grow step by step until a step loses more than LOSS
# (max over the subscribers) or does not connect everyone; a node's capacity
# is the subscribers of its last good step. One line per step:
#   cluster_step nodes=K rooms=R subs=C/T loss_max=.. loss_mean=.. cpu=<cores per node,..>
# and last:
#   cluster_capacity one_node=<subs> three_nodes=<subs> ratio=<three/one>
# Env: N (subscribers per room, 200), DUR (s, 6), LOSS (0.01), R1 (first
# one-node step, 3), R1MAX (12), R3MAX (rooms, 4 x the one-node rooms),
# REDIS_PORT (16379), HTTP_BASE (19100), MEDIA_BASE (44000).
cd "$(dirname "$0")"
LD="./lib/ld-linux-x86-64.so.2 --library-path ./lib"
N=${N:-200}; DUR=${DUR:-6}; LOSS=${LOSS:-0.01}; R1=${R1:-3}; R1MAX=${R1MAX:-12}
REDIS_PORT=${REDIS_PORT:-16379}; HB=${HTTP_BASE:-19100}; MB=${MEDIA_BASE:-44000}; PASSWORD=device-scale-$$
export MOAT_CLUSTER_PASSWORD=$PASSWORD
ulimit -n 65536
CURL=curl; command -v curl >/dev/null || CURL="$LD ./curl"

redis_up() {
  $LD ./redis-server --port $REDIS_PORT --bind 127.0.0.1 --requirepass $PASSWORD --save "" \
    --appendonly no --daemonize no --dir /tmp >redis.log 2>&1 &
  REDIS=$!
  sleep 0.5
}

# node_up K: node nK (HTTP $HB+K, media $MB+100K), one worker.
node_up() {
  local k=$1
  $LD ./moat --http-bind 127.0.0.1 --http-port $(($HB + k)) --media-port $(($MB + 100 * k)) --workers 1 \
    --plugin-dir ./plugins --candidate-addresses 127.0.0.1 --log-level warn --ng-port 0 \
    --whip-rate-per-ip 0 --max-pending-sessions 0 --max-sessions 0 --max-connections 0 \
    --max-connections-per-source 0 --max-pending-per-source 0 \
    --cluster-redis 127.0.0.1:$REDIS_PORT --cluster-node-id n$k --cluster-drain-timeout 1 \
    >node_$k.log 2>&1 &
  NODE[$k]=$!
  for i in $(seq 80); do $CURL -sf http://127.0.0.1:$(($HB + k))/healthz >/dev/null && return; sleep 0.25; done
  echo "node n$k did not come up"; tail -5 node_$k.log
}

cpu_of() { awk '{print $14+$15}' /proc/$1/stat; }

# step K R: R rooms over K nodes; prints the step line; exit status 0 when good.
step() {
  local K=$1 R=$2 pids=() c0=() c1=() r k t0 t1
  for k in $(seq 0 $((K - 1))); do c0[$k]=$(cpu_of ${NODE[$k]}); done
  t0=$(date +%s.%N)
  for r in $(seq 0 $((R - 1))); do
    k=$((r % K)); local whep=http://127.0.0.1:$(($HB + k))/whep/room/s${K}_${R}_$r
    [ $k -ne 0 ] && whep="$whep?edge="
    timeout 120 $LD ./moat-flood --whip http://127.0.0.1:$HB/whip/room/s${K}_${R}_$r \
      --whep "$whep" --subscribers $N --duration $DUR --drain 1 --setup-timeout 40 --json --quiet \
      >c_${K}_${R}_$r.json 2>c_${K}_${R}_$r.err &
    pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(date +%s.%N)
  for k in $(seq 0 $((K - 1))); do c1[$k]=$(cpu_of ${NODE[$k]}); done
  local cpus="" ; for k in $(seq 0 $((K - 1))); do
    cpus="$cpus$(awk -v a=${c0[$k]} -v b=${c1[$k]} -v t=$(awk -v x=$t0 -v y=$t1 'BEGIN{print y-x}') 'BEGIN{printf "%.2f", (b-a)/100/t}'),"; done
  python3 - "$K" "$R" "$N" "$LOSS" "${cpus%,}" <<'PY'
import json, sys
K, R, N = map(int, sys.argv[1:4]); limit = float(sys.argv[4]); cpus = sys.argv[5]
conn = 0; lmax = 0.0; lmean = 0.0
for r in range(R):
    try:
        d = json.load(open(f"c_{K}_{R}_{r}.json"))
    except Exception as e:
        print(f"  room {r}: no report ({e})"); lmax = 1.0; continue
    conn += d["connected"]; lmax = max(lmax, d["loss_max"]); lmean += d["loss_mean"] / R
print(f"cluster_step nodes={K} rooms={R} subs={conn}/{R*N} loss_max={lmax:.4f} "
      f"loss_mean={lmean:.4f} cpu={cpus}", flush=True)
sys.exit(0 if conn == R * N and lmax <= limit else 1)
PY
}

# ramp K FIRST STEP MAX: steps until one fails; echoes the last good room count.
ramp() {
  local K=$1 R=$2 inc=$3 max=$4 good=0
  while [ $R -le $max ]; do
    if step $K $R >&2; then good=$R; else break; fi
    R=$((R + inc)); sleep 2
  done
  echo $good
}

stop_all() {
  for p in ${NODE[@]}; do kill -KILL $p 2>/dev/null; done
  kill $REDIS 2>/dev/null; wait 2>/dev/null
  NODE=()
}

redis_up; node_up 0
good1=$(ramp 1 $R1 1 $R1MAX)
stop_all
redis_up; for k in 0 1 2; do node_up $k; done
for k in 1 2; do $CURL -s -XPOST http://127.0.0.1:$(($HB + k))/api/cluster/drain >/dev/null; done
for i in $(seq 40); do  # until the owner sees both edges draining
  [ "$($CURL -s http://127.0.0.1:$HB/api/cluster | grep -o '"draining"' | wc -l)" -ge 2 ] && break; sleep 0.25
done
first3=$(( good1 > 0 ? (5 * good1 / 2 + 2) / 3 * 3 : 3 ))
good3=$(ramp 3 $first3 3 ${R3MAX:-$((4 * (good1 > 0 ? good1 : 3)))})
$CURL -s http://127.0.0.1:$HB/metrics | grep -v "^#" | grep -E "cascade|dropped|relay" | grep -v " 0$" >cluster_metrics.txt
stop_all
# A ramp that never failed gives a lower bound only: said as capped=.
capped=""; [ $((good1 + 1)) -gt $R1MAX ] && capped="${capped}one_node,"
[ $((good3 + 3)) -gt ${R3MAX:-$((4 * (good1 > 0 ? good1 : 3)))} ] && capped="${capped}three_nodes,"
awk -v a=$((good1 * N)) -v b=$((good3 * N)) -v c="${capped%,}" 'BEGIN{printf "cluster_capacity one_node=%d three_nodes=%d ratio=%.2f capped=%s\n", a, b, (a > 0 ? b / a : 0), (c == "" ? "none" : c)}'
