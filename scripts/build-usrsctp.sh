#!/usr/bin/env bash
# Debian's libusrsctp2 is built with usrsctp's autotools default,
# --enable-debug: SCTP_DEBUG logging compiled in and CFLAGS "-g -O0", so the
# whole SCTP stack of every data channel runs unoptimised (its software
# CRC32c alone was 18% of a data channel receiver's instructions). Moat
# rebuilds Debian's own source package with usrsctp's meson build, release
# and without debug, as a static library in a project-local prefix
# (.deps/usrsctp) that meson finds through PKG_CONFIG_PATH. Nothing is
# downloaded from outside Debian.
#
# NOT WIRED IN YET (install-deps.sh does not call it, meson.build does not
# look for .deps/usrsctp). With usrsctp's default congestion control, an
# optimised usrsctp made tests/unit/sctp test_sctp_transfer
# /sctp/transfer/unordered-lossy stall in about one run in three (usrsctp
# kept 4 chunks unacknowledged and sent nothing on T3); with HS-TCP and
# Moat's own CRC32c (now the defaults) it passed 20 of 20 runs and the
# integration tests, but gained little more on the bench (loopback
# ratio_vs_tls 0.58-0.65 against 0.53-0.61), so the build stays on
# Debian's library for now.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
prefix="$top/.deps/usrsctp"
if [ -f "$prefix/lib/pkgconfig/usrsctp.pc" ] && [ -f "$prefix/lib/libusrsctp.a" ]; then
  exit 0
fi
# apt-get source needs a deb-src entry: build-libsrtp.sh adds one.
work="$top/.deps/usrsctp-src"
rm -rf "$work" && mkdir -p "$work"
(cd "$work" && apt-get source -qq libusrsctp >/dev/null 2>&1 || apt-get source libusrsctp)
src=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name 'libusrsctp-*' | head -n1)
cd "$src"
meson setup build --prefix="$prefix" --libdir=lib --buildtype=release -Db_ndebug=true \
  -Ddefault_library=static -Db_staticpic=true -Dsctp_debug=false -Dsctp_invariants=false \
  -Dsctp_build_programs=false >/dev/null
ninja -C build >/dev/null
ninja -C build install >/dev/null
# Relocatable: .deps may be reached through another worktree's symlink.
sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$prefix/lib/pkgconfig/usrsctp.pc"
grep -q 'pthread' "$prefix/lib/pkgconfig/usrsctp.pc" ||
  sed -i 's/^Libs: \(.*\)$/Libs: \1 -lpthread/' "$prefix/lib/pkgconfig/usrsctp.pc"
echo "build-usrsctp: usrsctp (release, static) installed in $prefix"
