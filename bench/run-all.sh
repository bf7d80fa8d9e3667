#!/usr/bin/env bash
# Runs every benchmark from a release build; each prints its own ratios.
# MOAT_BENCH_QUICK=1 (`make bench-quick`, part of `make test`): each runs a
# few seconds (bench/bench_quick.h, QUICK in the Python drivers), must be
# built, must exit 0 within QUICK_LIMIT_S (a bench exits non-zero when its
# run measured nothing: Moat or a baseline it runs by default carried
# nothing, or that baseline is missing); no figure is judged, so the quick
# runs go in two lanes at once (BENCH_LANES=1 for one): browsers and aiortc
# in one, floods and the tunnel in the other; each bench has its own
# namespaces, subnets and ports. Figures (`make bench`) come one at a time.
set -uo pipefail
build=${1:-build}
quick=${MOAT_BENCH_QUICK:-0}
[ "$quick" = 0 ] && quick=
QUICK_LIMIT_S=${QUICK_LIMIT_S:-300}
ALL="srtpplus datachannel flood paced handover relay sfu sfu_quality cluster memory transcode voip tunnel device_scale"
LANE_A="sfu_quality memory cluster voip datachannel transcode srtpplus"
LANE_B="tunnel paced flood sfu handover relay device_scale"

# run_lane BENCH...: runs each in turn; exit status 1 if any failed.
run_lane() {
  local bench start rc status=0
  for bench in "$@"; do
    if [ ! -x "$build/bench/$bench" ]; then
      if [ -n "$quick" ]; then
        echo "== bench/$bench: not built"; status=1
      fi
      continue
    fi
    echo "== bench/$bench"
    start=$SECONDS
    if [ -n "$quick" ]; then
      timeout --kill-after=10 "$QUICK_LIMIT_S" "$build/bench/$bench"
    else
      "$build/bench/$bench"
    fi
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "== bench/$bench: FAILED (exit $rc)"; status=1
    elif [ -n "$quick" ]; then
      echo "== bench/$bench: ok ($((SECONDS - start)) s)"
    fi
  done
  return $status
}

if [ -z "$quick" ] || [ "${BENCH_LANES:-2}" -le 1 ]; then
  # shellcheck disable=SC2086
  run_lane $ALL
  exit $?
fi
# Every bench is in exactly one lane.
[ "$(tr ' ' '\n' <<<"$LANE_A $LANE_B" | sort | tr '\n' ' ')" = "$(tr ' ' '\n' <<<"$ALL" | sort | tr '\n' ' ')" ] ||
  { echo "bench/run-all.sh: the lanes do not list every bench once"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2086
run_lane $LANE_A >"$out/a" 2>&1 &
a=$!
# shellcheck disable=SC2086
run_lane $LANE_B >"$out/b" 2>&1 &
b=$!
wait $a; ra=$?
wait $b; rb=$?
echo "== lane A ($LANE_A)"
cat "$out/a"
echo "== lane B ($LANE_B)"
cat "$out/b"
[ $ra -eq 0 ] && [ $rb -eq 0 ]
