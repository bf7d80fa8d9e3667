#!/usr/bin/env bash
# Runs every benchmark from a release build; each prints its own ratios.
set -euo pipefail
build=${1:-build}
for bench in srtpplus datachannel flood paced handover relay sfu transcode voip; do
  if [ -x "$build/bench/$bench" ]; then
    echo "== bench/$bench"
    "$build/bench/$bench"
  fi
done
