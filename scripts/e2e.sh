#!/usr/bin/env bash
# The end-to-end phases' driver: `e2e.sh NAME EXPR` runs the tests of
# tests/integration selected by the pytest marker expression EXPR, first
# those not marked `serial` in parallel (E2E_JOBS pytest-xdist workers,
# default 3: most tests wait on peers and timers, not on the CPU), then the
# `serial` ones (tests/integration/conftest.py says why each is): those
# also marked `alone` one at a time, then the others two at a time
# (E2E_SERIAL_JOBS, xdist workers taking whole files). JUnit reports:
# build/test-reports/NAME.xml, NAME-alone.xml and NAME-serial.xml.
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1 expr=$2
jobs=${E2E_JOBS:-3}
serial_jobs=${E2E_SERIAL_JOBS:-2}
reports=build/test-reports
mkdir -p "$reports"
python=.venv/bin/python
# Rewritten test modules are cached in __pycache__ (ignored by git): each
# pytest run and xdist worker reuses them instead of parsing ~80 files.
unset PYTHONDONTWRITEBYTECODE
status=0
# pytest exits 5 when a marker expression selects nothing: not a failure.
run() {
  "$python" -m pytest "$@"
  local rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 5 ] || status=1
}
parallel=(-n "$jobs")
[ "$jobs" -le 1 ] && parallel=()
run -v "${parallel[@]}" -m "($expr) and not serial" --junitxml="$reports/$name.xml" \
  -p no:cacheprovider tests/integration
run -v -m "($expr) and serial and alone" --junitxml="$reports/$name-alone.xml" \
  -p no:cacheprovider tests/integration
serial=(-n "$serial_jobs" --dist loadfile)
[ "$serial_jobs" -le 1 ] && serial=()
run -v "${serial[@]}" -m "($expr) and serial and not alone" \
  --junitxml="$reports/$name-serial.xml" -p no:cacheprovider tests/integration
exit $status
