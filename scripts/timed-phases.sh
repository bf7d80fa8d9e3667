#!/usr/bin/env bash
# `make test`'s driver: runs each named make target as a phase, stops at the
# first failing one, and prints a table of the phases' wall times and of the
# ten slowest tests (meson's testlog.json of build-asan and pytest's JUnit
# files under build/test-reports/), so a slow test or phase shows in every
# run. `a+b+c` runs those targets at once (each one's output goes to
# build/test-reports/phase-NAME.log and is printed when all are done), for
# phases that neither share resources nor judge timing. A target written
# `idle:NAME` runs in the kernel's SCHED_IDLE class (chrt --idle 0): it gets
# a core only when nothing else wants it, so it fills the cores the other
# targets of its group leave free without slowing them (the fuzz runs
# beside the end-to-end tests, which mostly wait on peers and timers).
set -uo pipefail
cd "$(dirname "$0")/.."
reports=build/test-reports
# `make test` installed the dependencies before its builds: the phases'
# targets need not check them again (Makefile, deps).
export MOAT_DEPS_CHECKED=1
# pytest caches its rewritten test modules in __pycache__ (ignored by git):
# without it every pytest run and xdist worker parses all 80 files again
# (5-20 s each on this machine).
unset PYTHONDONTWRITEBYTECODE
mkdir -p "$reports"
rm -f "$reports"/*.xml "$reports"/phase-*
names=() times=() results=()
status=0
start_all=$(date +%s)

# Runs the targets of one `a+b` group at once; records each one's time.
run_group() {
  local sub
  local -a subs
  IFS=+ read -ra subs <<<"$1"
  echo "== running at once: ${subs[*]} (output: $reports/phase-NAME.log, printed when all end)"
  for sub in "${subs[@]}"; do
    (
      t0=$(date +%s)
      if [[ $sub == idle:* ]]; then
        chrt --idle 0 make --no-print-directory "${sub#idle:}" >"$reports/phase-${sub#idle:}.log" 2>&1
      else
        make --no-print-directory "$sub" >"$reports/phase-$sub.log" 2>&1
      fi
      echo "$? $(($(date +%s) - t0))" >"$reports/phase-${sub#idle:}.rc"
    ) &
  done
  wait
  for sub in "${subs[@]}"; do
    sub=${sub#idle:}
    echo "== $sub"
    cat "$reports/phase-$sub.log"
    read -r rc seconds <"$reports/phase-$sub.rc"
    names+=("$sub") times+=("$seconds")
    if [ "$rc" -eq 0 ]; then results+=(ok); else results+=(FAILED); status=1; fi
  done
}

for phase in "$@"; do
  if [[ $phase == *+* ]]; then
    run_group "$phase"
  else
    t0=$(date +%s)
    if make --no-print-directory "$phase"; then result=ok; else result=FAILED; status=1; fi
    names+=("$phase") times+=($(($(date +%s) - t0))) results+=("$result")
  fi
  [ $status -eq 0 ] || break
done
echo
echo "== make test: phases (wall seconds)"
for i in "${!names[@]}"; do
  printf '  %-14s %6s s  %s\n' "${names[$i]}" "${times[$i]}" "${results[$i]}"
done
printf '  %-14s %6s s\n' total $(($(date +%s) - start_all))
echo "== the ten slowest tests"
python3 - "$reports" <<'PY'
import glob, json, sys, xml.etree.ElementTree as ET
rows = []
try:
    for line in open("build-asan/meson-logs/testlog.json"):
        t = json.loads(line)
        rows.append((float(t.get("duration", 0)), "unit " + t["name"]))
except OSError:
    pass
for path in glob.glob(sys.argv[1] + "/*.xml"):
    try:
        for case in ET.parse(path).iter("testcase"):
            rows.append((float(case.get("time", 0)),
                         "e2e " + case.get("classname", "") + "::" + case.get("name", "")))
    except ET.ParseError:
        pass
for seconds, name in sorted(rows, reverse=True)[:10]:
    print(f"  {seconds:8.1f} s  {name}")
PY
exit $status
