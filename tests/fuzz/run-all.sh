#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time; any crash fails the run.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-15}
status=0
mapfile -t targets < <(find "$build/tests/fuzz" -type f -executable -name 'fuzz_*' | sort)
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets found in $build"; exit 1; }
for t in "${targets[@]}"; do
  name=$(basename "$t")
  corpus="$build/fuzz-corpus/$name"
  mkdir -p "$corpus"
  seeds="tests/fuzz/seeds/$name"
  dirs=("$corpus"); [ -d "$seeds" ] && dirs+=("$seeds")
  if "$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=0 \
       -artifact_prefix="$build/fuzz-corpus/$name-" "${dirs[@]}" >"$build/fuzz-corpus/$name.log" 2>&1; then
    echo "fuzz $name: ok ($(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$build/fuzz-corpus/$name.log" || grep -Eo '#[0-9]+[[:space:]]+DONE' "$build/fuzz-corpus/$name.log" | tail -1))"
  else
    echo "fuzz $name: FAILED"; tail -n 40 "$build/fuzz-corpus/$name.log"; status=1
  fi
done
exit $status
