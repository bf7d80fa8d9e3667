#!/usr/bin/env bash
# The echo path of bench/relay against the tree before the routing core
# (plugin API v1) and against HEAD, built the same way (gcc -O3) and run
# alternately: a same-run before/after comparison.
#   bash bench/relay/before.sh [baseline-commit]
set -euo pipefail
base=${1:-8ff3d5d}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tree in "$base" HEAD; do
  dir="$work/$tree"
  mkdir -p "$dir"
  git -C "$root" archive "$tree" gateway/rtp gateway/plugin.h plugins/echo | tar -x -C "$dir"
  cat > "$dir/main.c" <<'C'
#include <stdio.h>
#include "echo_path.h"
int main(void)
{
    double best = 1e9;
    for (int i = 0; i < 5; i++) {
        double ns = echo_path_ns(2000000u);
        best = ns < best ? ns : best;
    }
    printf("%.1f\n", best);
    return 0;
}
C
  gcc -O3 -DNDEBUG -std=c11 -D_GNU_SOURCE -I "$dir/gateway" -I "$dir/plugins/echo" \
    -I "$root/bench/relay" $(pkg-config --cflags glib-2.0) "$dir/main.c" \
    "$root/bench/relay/echo_path.c" "$dir"/plugins/echo/*.c "$dir"/gateway/rtp/*.c \
    $(pkg-config --libs glib-2.0) -o "$dir/bench"
done
for round in 1 2 3; do
  v1=$("$work/$base/bench")
  v2=$("$work/HEAD/bench")
  echo "round $round: echo ns_per_packet v1=$v1 v2=$v2"
done
