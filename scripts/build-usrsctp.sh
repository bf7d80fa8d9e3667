#!/usr/bin/env bash
# Debian's libusrsctp 0.9.5 restarts no T3-rtx timer on its fast SACK path, so
# every bulk data-channel transfer takes a spurious retransmission timeout
# about 1 s in and restarts from a one-packet window (RFC 9260 §6.3.2 R3;
# see scripts/patches/usrsctp-express-sack-t3-restart.patch). Moat rebuilds
# Debian's own source package with that patch into a project-local prefix
# (.deps/usrsctp: static library, usrsctp.h, usrsctp.pc) that meson finds
# through PKG_CONFIG_PATH. Nothing is downloaded from outside Debian.
#
# The build is Debian's: dh_autoreconf + configure with the package's
# defaults and dpkg-buildflags, which means configure's default
# --enable-debug (SCTP_DEBUG defined, "-g -O0" appended after the -O2 of
# dpkg-buildflags). Only the carried patches differ from Debian's binary.
# An optimised build (-O2/-O3, no SCTP_DEBUG) has made a lossy partially
# reliable transfer test stall (tests/unit/sctp test_sctp_transfer), so it is
# not the default; USRSCTP_CFLAGS_EXTRA appends flags for experiments.
#
# Environment (for experiments and tests; the defaults are what Moat links):
#   USRSCTP_PREFIX        install prefix (default .deps/usrsctp)
#   USRSCTP_PATCHES=0     build Debian's source without Moat's patches
#   USRSCTP_CONFIGURE     extra configure arguments (e.g. --disable-debug)
#   USRSCTP_CFLAGS_EXTRA  flags appended after configure's own
# Idempotent: the prefix records a stamp of the patches and options it was
# built with, and nothing is rebuilt while the stamp matches.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
prefix="${USRSCTP_PREFIX:-$top/.deps/usrsctp}"
patch_dir="$top/scripts/patches"
patches=()
if [ "${USRSCTP_PATCHES:-1}" != 0 ]; then
  patches=("$patch_dir"/usrsctp-*.patch)
fi
configure_extra="${USRSCTP_CONFIGURE:-}"
cflags_extra="${USRSCTP_CFLAGS_EXTRA:-}"

stamp_text() {
  echo "source: libusrsctp (Debian)"
  echo "configure: $configure_extra"
  echo "cflags_extra: $cflags_extra"
  for p in "${patches[@]}"; do
    echo "patch: $(basename "$p") $(sha256sum "$p" | cut -d' ' -f1)"
  done
}
stamp="$prefix/moat-build-stamp"
if [ -f "$prefix/lib/libusrsctp.a" ] && [ -f "$prefix/lib/pkgconfig/usrsctp.pc" ] &&
  [ "$(cat "$stamp" 2>/dev/null)" = "$(stamp_text)" ]; then
  exit 0
fi

# apt-get source needs a deb-src entry; build-libsrtp.sh adds one when missing.
work="$(mktemp -d "${TMPDIR:-/tmp}/moat-usrsctp-src.XXXXXX")"
trap 'rm -rf "$work"' EXIT
(cd "$work" && { apt-get source -qq libusrsctp >/dev/null 2>&1 || apt-get source libusrsctp; })
src=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name 'libusrsctp-*' | head -n1)
cd "$src"
# apt-get source has applied Debian's own quilt series (debian/patches).
for p in "${patches[@]}"; do
  patch -s -p1 <"$p"
done

# As debian/rules: hardening=+all, -Wno-address-of-packed-member appended.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
export DEB_CFLAGS_MAINT_APPEND=-Wno-address-of-packed-member
cflags="$(dpkg-buildflags --get CFLAGS)"
cppflags="$(dpkg-buildflags --get CPPFLAGS)"
autoreconf -fi >/dev/null 2>&1
# --with-pic: the static library also links into position-independent
# executables and shared objects (the fuzz build, ASan unit tests).
# shellcheck disable=SC2086
./configure --quiet --prefix="$prefix" --libdir="$prefix/lib" --disable-shared --enable-static \
  --with-pic --disable-programs $configure_extra \
  CFLAGS="$cflags" CPPFLAGS="$cppflags" >/dev/null
if [ -n "$cflags_extra" ]; then
  make -s -j"$(nproc)" CFLAGS="$(sed -n 's/^CFLAGS = //p' usrsctplib/Makefile) $cflags_extra" >/dev/null
else
  make -s -j"$(nproc)" >/dev/null
fi
rm -rf "$prefix"
make -s install >/dev/null
# Static only, so nothing linked against it can pick Debian's shared copy.
rm -f "$prefix"/lib/libusrsctp.so* "$prefix"/lib/libusrsctp.la
sed -i 's/^Libs:.*/Libs: -L${libdir} -lusrsctp -lpthread/' "$prefix/lib/pkgconfig/usrsctp.pc"
# meson.build warns when the usrsctp it finds does not name Moat's patches.
names=$(for p in "${patches[@]}"; do basename "$p" .patch; done | paste -sd, -)
sed -i "1i moat_patches=${names}" "$prefix/lib/pkgconfig/usrsctp.pc"
# Relocatable: .deps may be reached through a worktree's symlink.
sed -i -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' -e 's|^libdir=.*|libdir=${prefix}/lib|' \
  "$prefix/lib/pkgconfig/usrsctp.pc"
stamp_text >"$stamp"
echo "build-usrsctp: libusrsctp with $(basename -a "${patches[@]}" 2>/dev/null | tr '\n' ' ')installed in $prefix"
