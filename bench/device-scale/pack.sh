#!/bin/bash
# Packs build/gateway/moat, moat-flood, the plugins, redis-server and curl with
# every shared library they load (ldd closure, with the dynamic loader) and the
# scripts beside this one, for a machine without the project's packages (the
# lent 16-core device). Run from the project checkout:
#   bash bench/device-scale/pack.sh build/device-scale.tar.xz
# then on the device (README.md): tar -xJf build/device-scale.tar.xz -C /tmp && /tmp/pkg/device-run.sh
set -e
out=${1:?out.tar.xz}; b=${BUILD:-build}; t=$(mktemp -d); p=$t/pkg
mkdir -p $p/lib $p/plugins
cp $b/gateway/moat $b/tools/moat-flood "$(command -v redis-server)" "$(command -v curl)" $p/
for d in $b/plugins/*/; do n=$(basename $d); mkdir -p $p/plugins/$n; cp $d/*.so $p/plugins/$n/; done
ldd $p/moat $p/moat-flood $p/redis-server $p/curl $p/plugins/*/*.so |
  awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u | while read l; do cp -L "$l" $p/lib/; done
here=$(dirname "$0")
cp "$here/scale.sh" "$here/cluster_scale.sh" "$here/device-run.sh" "$here/sample.py" $p/
tar -C $t -caf "$out" pkg  # compression by suffix: .tar.xz for the device, .tar here; rm -rf $t; ls -la "$out"
