#!/bin/bash
# SFU fan-out scaling across workers: W workers, 2W rooms, N subscribers per room,
# one moat-flood process per room; prints delivered pps, loss, gateway CPU per packet.
cd "$(dirname "$0")"
LD="./lib/ld-linux-x86-64.so.2 --library-path ./lib"
N=${N:-400}; DUR=${DUR:-8}
ulimit -n 65536
nproc; uname -r; for t in curl python3; do command -v $t >/dev/null || echo "missing $t"; done
for W in ${WS:-1 2 4}; do
  HTTP=$((${HTTP_BASE:-18900} + W)); MEDIA=$((${MEDIA_BASE:-41000} + W * 100))
  $LD ./moat --http-bind 127.0.0.1 --http-port $HTTP --media-port $MEDIA --workers $W --plugin-dir ./plugins --candidate-addresses 127.0.0.1 --log-level warn \
     --whip-rate-per-ip 0 --max-pending-sessions 0 --max-sessions 0 --ng-port 0 --max-connections 0 \
     --max-connections-per-source 0 --max-pending-per-source 0 >gw_$W.log 2>&1 &
  GW=$!
  for i in $(seq 60); do curl -sf http://127.0.0.1:$HTTP/healthz >/dev/null && break; sleep 0.25; done
  R=$((2 * W)); pids=()
  for r in $(seq $R); do
    curl -s -XPOST -H 'Content-Type: application/json' -d "{\"name\":\"r$r\",\"max_subscribers\":1000}" http://127.0.0.1:$HTTP/api/rooms >/dev/null
  done
  c0=$(awk '{print $14+$15}' /proc/$GW/stat); t0=$(date +%s.%N)
  python3 sample.py $GW http://127.0.0.1:$HTTP/metrics & SAMPLER=$!
  for r in $(seq $R); do
    $LD ./moat-flood --whip http://127.0.0.1:$HTTP/whip/room/r$r --whep http://127.0.0.1:$HTTP/whep/room/r$r \
      --subscribers $N --duration $DUR --drain 1 --setup-timeout 40 --json --quiet > f_${W}_$r.json 2>f_${W}_$r.err &
    pids+=($!)
  done
  wait "${pids[@]}"
  c1=$(awk '{print $14+$15}' /proc/$GW/stat); t1=$(date +%s.%N)
  kill -TERM $SAMPLER; wait $SAMPLER
  python3 - "$W" "$R" "$N" "$c0" "$c1" "$t0" "$t1" <<'PY'
import json, sys, glob
W, R, N = map(int, sys.argv[1:4]); c0, c1, t0, t1 = map(float, sys.argv[4:8])
conn = pub = 0; lmax = 0.0; lmean = 0.0; ok = 0; deliv = 0.0; run = 0
for r in range(1, R + 1):
    try:
        d = json.load(open(f"f_{W}_{r}.json"))
    except Exception as e:
        print(f"W={W} room {r}: no report ({e})"); continue
    ok += 1; conn += d["connected"]; pub = d["published"]; run = d["run_s"]
    lmax = max(lmax, d["loss_max"]); lmean += d["loss_mean"] / R
    deliv += d["published"] * d["connected"] * (1 - d["loss_mean"])
cpu = (c1 - c0) / 100
print(f"scale workers={W} rooms={R} subs={conn}/{R*N} loss_max={lmax:.4f} loss_mean={lmean:.4f} "
      f"delivered_pps={deliv/max(run,1e-9):.0f} gw_cpu_cores={cpu/(t1-t0):.2f} us_per_pkt={cpu/max(deliv,1)*1e6:.2f}")
PY
  curl -s http://127.0.0.1:$HTTP/metrics | grep -v "^#" | grep -E "dropped|relay|worker|sent_total|received_total" | grep -v " 0$" > metrics_$W.txt
  kill -TERM $GW; wait $GW
done
