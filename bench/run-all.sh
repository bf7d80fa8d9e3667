#!/usr/bin/env bash
# Runs every benchmark from a release build; each prints its own ratios.
# MOAT_BENCH_QUICK=1 (`make bench-quick`, part of `make test`): each runs a
# few seconds (bench/bench_quick.h, QUICK in the Python drivers), must be
# built, must exit 0 within QUICK_LIMIT_S; no figure is judged.
set -uo pipefail
build=${1:-build}
quick=${MOAT_BENCH_QUICK:-0}
[ "$quick" = 0 ] && quick=
QUICK_LIMIT_S=${QUICK_LIMIT_S:-300}
status=0
for bench in srtpplus datachannel flood paced handover relay sfu sfu_quality cluster memory transcode voip tunnel; do
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
exit $status
