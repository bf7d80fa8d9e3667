#!/usr/bin/env bash
# Debian's libusrsctp 0.9.5 restarts no T3-rtx timer on its fast SACK path, so
# every bulk data-channel transfer takes a spurious retransmission timeout
# about 1 s in and restarts from a one-packet window (RFC 9260 §6.3.2 R3;
# see scripts/patches/usrsctp-express-sack-t3-restart.patch). And it keeps
# each received DATA chunk by reference into the packet's 2048-byte cluster
# (a packet's last chunk: the packet itself, every mbuf of it) while the
# receive window charges a held chunk only its data + 256 bytes: 1-byte
# chunks a peer never lets become deliverable, in padded packets, made a
# 1 MiB window hold about 10 MB (scripts/patches/
# usrsctp-copy-small-chunks.patch copies every chunk of up to 1 KiB out of
# the packet, the last one too; test_datachannel_held_chunks_hostile: 10.4
# -> 2.1 MB per session in 1200-byte packets, 6.4 -> 2.1 MB in 1040-byte
# ones, five plain mbufs whose last chunk took them all).
# Moat rebuilds Debian's own source package with those patches (applied in
# name order) into a project-local prefix
# (.deps/usrsctp: static library, usrsctp.h, usrsctp.pc) that meson finds
# through PKG_CONFIG_PATH. Nothing is downloaded from outside Debian.
#
# The build is Debian's: autoreconf + configure with the package's defaults
# and dpkg-buildflags (debian/rules: hardening=+all,
# -Wno-address-of-packed-member), so configure's default --enable-debug
# defines SCTP_DEBUG and appends "-g -O0" after the -O2 of dpkg-buildflags,
# as in Debian's binary. Moat changes one thing besides the patches: it
# appends USRSCTP_OPTIMIZE, "-O2 -fno-strict-aliasing" by default, after
# configure's -O0; SCTP_DEBUG and every other define stay as Debian's (the
# debug output stays off unless asked for at run time). Measured A/B in the
# same run (load average 2.5-4.5 on 2 cores): an in-memory bulk transfer
# through two associations costs 23% less CPU with 1200-byte packets
# (285 -> 368 MB per CPU-second) and 16% less with 16 KiB ones (779 -> 931);
# bench/datachannel loopback, SCTP MB/s, mean of 3 alternating runs: 16 KiB
# messages in 1200-byte packets 89 -> 137, 1 KiB 76 -> 108 (a second set,
# Debian's own library against this one, 123 -> 142 and 123 -> 140, with
# the TLS baseline itself varying 4x under the load). With it the sctp
# unit tests passed 20 runs out of 20 (test_sctp_transfer unordered-lossy
# included, which had stalled with a meson -O3 NDEBUG build of upstream's
# tree) and so did the data-channel integration tests.
# USRSCTP_OPTIMIZE= (empty) gives Debian's binary plus the patches exactly.
#
# Environment (for experiments and tests; the defaults are what Moat links):
#   USRSCTP_PREFIX        install prefix (default .deps/usrsctp)
#   USRSCTP_PATCHES=0     build Debian's source without Moat's patches
#   USRSCTP_OPTIMIZE      flags appended after configure's "-g -O0"
#   USRSCTP_CONFIGURE     extra configure arguments (e.g. --disable-debug)
#   USRSCTP_CFLAGS_EXTRA  more flags appended after those
# Idempotent: the prefix records a stamp of the patches and options it was
# built with, and nothing is rebuilt while the stamp matches.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/debian-source.sh"
prefix="${USRSCTP_PREFIX:-$top/.deps/usrsctp}"
patch_dir="$top/scripts/patches"
patches=()
if [ "${USRSCTP_PATCHES:-1}" != 0 ]; then
  patches=("$patch_dir"/usrsctp-*.patch)
fi
configure_extra="${USRSCTP_CONFIGURE:-}"
optimize="${USRSCTP_OPTIMIZE--O2 -fno-strict-aliasing}"
cflags_extra="$(echo "$optimize ${USRSCTP_CFLAGS_EXTRA:-}" | xargs)"

stamp_text() {
  echo "source: libusrsctp (Debian)"
  echo "configure: $configure_extra"
  echo "cflags_extra: $cflags_extra"
  patch_lines "${patches[@]}"
}
stamp="$prefix/moat-build-stamp"
if stamp_current "$prefix" "$(stamp_text)" lib/libusrsctp.a lib/pkgconfig/usrsctp.pc; then
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/moat-usrsctp-src.XXXXXX")"
trap 'rm -rf "$work"' EXIT
unpack_patched libusrsctp "$work" "${patches[@]}"

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
