#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time, FUZZ_JOBS at once (default:
# the number of cores); any crash fails the run.
set -uo pipefail
build=${1:-build-fuzz}
seconds=${2:-15}
jobs=${FUZZ_JOBS:-$(nproc)}
# libFuzzer's per-input limit is wall time: a run that shares the cores at a
# low priority (make test) gives an input longer before calling it a hang.
export FUZZ_UNIT_TIMEOUT=${FUZZ_UNIT_TIMEOUT:-5}
# UBSan reports and carries on unless told otherwise: an overflow found by a
# target would print, write no artifact and end "ok". Halting makes it a
# crash libFuzzer saves and this script fails on (as the unit tests do).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
mapfile -t targets < <(find "$build/tests/fuzz" -type f -executable -name 'fuzz_*' | sort)
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets found in $build"; exit 1; }

# run_one TARGET: one bounded libFuzzer run; prints one line, and the log's
# tail when the target found something.
run_one() {
  local t=$1 build=$2 seconds=$3 name corpus seeds dirs log
  name=$(basename "$t")
  corpus="$build/fuzz-corpus/$name"
  log="$build/fuzz-corpus/$name.log"
  mkdir -p "$corpus"
  seeds="tests/fuzz/seeds/$name"
  dirs=("$corpus"); [ -d "$seeds" ] && dirs+=("$seeds")
  if "$t" -max_total_time="$seconds" -timeout="$FUZZ_UNIT_TIMEOUT" -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$build/fuzz-corpus/$name-" "${dirs[@]}" >"$log" 2>&1; then
    echo "fuzz $name: ok ($(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | tail -1))"
  else
    echo "fuzz $name: FAILED"; tail -n 40 "$log"; return 1
  fi
}
export -f run_one
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {} "$build" "$seconds"
