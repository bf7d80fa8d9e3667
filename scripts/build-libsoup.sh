#!/usr/bin/env bash
# Debian 12's libsoup 3.2.3 leaks the request path of every request its
# server refuses itself because the body's framing is unreadable (an unknown
# Transfer-Encoding: 501; a Content-Length it cannot read: 400), before any
# handler of Moat's sees it: 2000 such requests with 60 KB paths took the
# gateway's RSS up by 117 MB in half a second, from anyone able to connect
# (scripts/patches/libsoup-server-free-path-on-unreadable-body.patch;
# test_http_refused_by_libsoup_hostile).
# Moat rebuilds Debian's own source package with the patches (applied in
# name order, after Debian's quilt series) into a project-local prefix
# (.deps/libsoup: the shared library, same soname, headers, libsoup-3.0.pc)
# that meson finds through PKG_CONFIG_PATH; the build tree's binaries carry
# its path as their rpath, so the gateway loads this copy, and libraries
# that link libsoup-3.0.so.0 themselves (libnice's gupnp-igd) get the same
# one. Nothing is downloaded from outside Debian.
# Built as debian/rules does (meson, dpkg-buildflags with hardening=+all),
# without what a server-side gateway does not use and this host may lack the
# -dev packages for: GSSAPI and NTLM client authentication, introspection,
# Vala bindings, documentation, tests and sysprof.
#
# Environment: MOAT_DEPS_PREFIX install prefix (default .deps/libsoup);
# LIBSOUP_PATCHES=0 builds Debian's source without Moat's patches.
# Idempotent: the prefix records a stamp of the patches it was built with,
# and nothing is rebuilt while the stamp matches.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/debian-source.sh"
prefix="${MOAT_DEPS_PREFIX:-$top/.deps/libsoup}"
patches=()
if [ "${LIBSOUP_PATCHES:-1}" != 0 ]; then
  patches=("$top"/scripts/patches/libsoup-*.patch)
fi

stamp_text() {
  echo "source: libsoup3 (Debian)"
  patch_lines "${patches[@]}"
}
stamp="$prefix/moat-build-stamp"
if stamp_current "$prefix" "$(stamp_text)" lib/libsoup-3.0.so.0 lib/pkgconfig/libsoup-3.0.pc; then
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/moat-libsoup-src.XXXXXX")"
trap 'rm -rf "$work"' EXIT
unpack_patched libsoup3 "$work" "${patches[@]}"

export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS)" CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)" \
  LDFLAGS="$(dpkg-buildflags --get LDFLAGS) -Wl,-O1" \
  meson setup _build --prefix="$prefix" --libdir=lib --buildtype=plain \
  -Dgssapi=disabled -Dntlm=disabled -Dbrotli=enabled -Dtls_check=false \
  -Dintrospection=disabled -Dvapi=disabled -Ddocs=disabled -Ddoc_tests=false \
  -Dtests=false -Dinstalled_tests=false -Dautobahn=disabled -Dsysprof=disabled \
  >/dev/null
ninja -C _build >/dev/null
rm -rf "$prefix"
ninja -C _build install >/dev/null
# meson.build warns when the libsoup it finds does not name Moat's patches.
names=$(for p in "${patches[@]}"; do basename "$p" .patch; done | paste -sd, -)
sed -i "1i moat_patches=${names}" "$prefix/lib/pkgconfig/libsoup-3.0.pc"
stamp_text >"$stamp"
echo "build-libsoup: libsoup3 with $(basename -a "${patches[@]}" 2>/dev/null | tr '\n' ' ')installed in $prefix"
