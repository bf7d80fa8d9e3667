#!/usr/bin/env bash
# Debian 12's simple-whip-client links libsoup-2.4, while Debian's libnice
# links gupnp-igd, which links libsoup-3.0; GStreamer's nice plugin loads both
# into one process and libsoup aborts ("libsoup2 symbols detected"). The
# end-to-end test runs the Debian whip-client against a copy of Debian's own
# libnice source built without UPnP (.deps/libnice-noupnp), put first on
# LD_LIBRARY_PATH for that one process. The gateway itself is not affected.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/debian-source.sh"
prefix="${MOAT_DEPS_PREFIX:-$top/.deps/libnice-noupnp}"
[ -f "$prefix/lib/libnice.so.10" ] && exit 0
work="$top/.deps/libnice-src"
rm -rf "$work" && mkdir -p "$work"
fetch_debian_source libnice "$work"
src=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name 'libnice-*' | head -n1)
cd "$src"
meson setup _build --prefix="$prefix" --libdir=lib -Dgupnp=disabled -Dgstreamer=disabled \
  -Dexamples=disabled -Dtests=disabled -Dintrospection=disabled -Dgtk_doc=disabled >/dev/null
ninja -C _build >/dev/null
ninja -C _build install >/dev/null
echo "build-libnice-noupnp: libnice without UPnP installed in $prefix"
