#!/usr/bin/env bash
# Same benchmarks, two revisions, one run: `bench/compare-revisions.sh REV_A
# REV_B [BENCH...]` builds each revision's release tree in a worktree under
# build-revs/ (ccache makes a rebuild cheap), then runs each named benchmark
# (default: paced relay sfu) for A, B, A, B, printing each run's last line
# and the load average before it: a change that should not cost anything
# (a move of files, a refactoring) shows it did not. Run it on an idle
# machine. MOAT_BENCH_QUICK=1 for a smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 REV_A REV_B [BENCH...]" >&2; exit 2; }
rev_a=$1 rev_b=$2
shift 2
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(paced relay sfu)
top=$(pwd)
export PKG_CONFIG_PATH="$top/.deps/libsrtp/lib/pkgconfig:$top/.deps/usrsctp/lib/pkgconfig:$top/.deps/libsoup/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
cc="gcc"
command -v ccache >/dev/null && cc="ccache gcc"

build_rev() { # REV -> prints the build folder
  local rev=$1 sha tree
  sha=$(git rev-parse --short "$rev")
  tree="$top/build-revs/$sha"
  if [ ! -d "$tree/src" ]; then
    mkdir -p "$tree"
    git worktree add -f --detach "$tree/src" "$sha" >/dev/null 2>&1
    ln -sfn "$top/.deps" "$tree/src/.deps"
    ln -sfn "$top/.venv" "$tree/src/.venv"
  fi
  if [ ! -f "$tree/src/build/build.ninja" ]; then
    (cd "$tree/src" && CCACHE_BASEDIR="$tree/src" CCACHE_NOHASHDIR=1 CC="$cc" \
      meson setup build --buildtype=release -Db_ndebug=true >/dev/null)
  fi
  CCACHE_BASEDIR="$tree/src" CCACHE_NOHASHDIR=1 ninja -C "$tree/src/build" >/dev/null
  echo "$tree/src"
}

echo "== building $rev_a and $rev_b"
tree_a=$(build_rev "$rev_a")
tree_b=$(build_rev "$rev_b")
for bench in "${benches[@]}"; do
  for round in 1 2; do
    for side in a b; do
      tree=$tree_a rev=$rev_a
      [ $side = b ] && tree=$tree_b rev=$rev_b
      [ -x "$tree/build/bench/$bench" ] || { echo "$bench: not built at $rev"; continue; }
      echo "== $bench round $round, $rev ($(git rev-parse --short "$rev")), load $(cut -d' ' -f1-3 /proc/loadavg)"
      (cd "$tree" && ./build/bench/"$bench" 2>&1 | tail -n 1)
    done
  done
done
