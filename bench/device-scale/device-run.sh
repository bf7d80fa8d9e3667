#!/bin/bash
# The device command: the fan-out table across workers (scale.sh), then the
# cluster's capacity (cluster_scale.sh); everything printed also lands in
# $OUT/device.log, the gateways' counters in $OUT/metrics.txt.
# Env: WS (worker counts, "1 2 4 6"), N (subscribers per room, 400), DUR (8),
# CN (subscribers per cluster room, 200), CDUR (6), SCALE_PASSES (2: the
# table before and after the cluster), SKIP_SCALE, SKIP_CLUSTER.
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/pkg/out}; mkdir -p "$OUT"
{
  echo "== $(date -u +%FT%TZ) $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
  scale() {
    [ -n "$SKIP_SCALE" ] && return
    N=${N:-400} DUR=${DUR:-8} WS=${WS:-1 2 4 6} ./scale.sh
    echo "== scale pass $1 done $(date -u +%T); load $(cut -d' ' -f1-3 /proc/loadavg)"
  }
  scale 1
  if [ -z "$SKIP_CLUSTER" ]; then
    N=${CN:-200} DUR=${CDUR:-6} ./cluster_scale.sh
    echo "== cluster done $(date -u +%T); load $(cut -d' ' -f1-3 /proc/loadavg)"
  fi
  [ "${SCALE_PASSES:-2}" -ge 2 ] && scale 2
} 2>&1 | tee "$OUT/device.log"
for f in metrics_*.txt cluster_metrics.txt; do [ -f $f ] && { echo "== $f"; cat $f; }; done >"$OUT/metrics.txt"
tail -n 20 gw_*.log node_*.log redis.log 2>/dev/null | tail -c 200000 >"$OUT/gateway-logs.txt"
