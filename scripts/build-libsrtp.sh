#!/usr/bin/env bash
# Debian's libsrtp2 is built on NSS, which costs 4-6x more per packet than
# OpenSSL's AES-NI code. Moat rebuilds Debian's own source package with
# --enable-openssl into a project-local prefix (.deps/libsrtp) that meson finds
# through PKG_CONFIG_PATH. Nothing is downloaded from outside Debian.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib/debian-source.sh"
prefix="${MOAT_DEPS_PREFIX:-$top/.deps/libsrtp}"
if [ -f "$prefix/lib/pkgconfig/libsrtp2.pc" ] && grep -q openssl "$prefix/lib/pkgconfig/libsrtp2.pc"; then
  exit 0
fi
work="$top/.deps/libsrtp-src"
rm -rf "$work" && mkdir -p "$work"
fetch_debian_source libsrtp2 "$work"
src=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name 'libsrtp2-*' | head -n1)
cd "$src"
./configure --quiet --prefix="$prefix" --enable-openssl --disable-pcap CFLAGS="-O2 -fPIC" >/dev/null
make -s -j"$(nproc)" libsrtp2.a >/dev/null
make -s install >/dev/null 2>&1 || {
  mkdir -p "$prefix/lib/pkgconfig" "$prefix/include/srtp2"
  cp libsrtp2.a "$prefix/lib/"
  cp include/srtp.h crypto/include/auth.h crypto/include/cipher.h crypto/include/crypto_types.h "$prefix/include/srtp2/"
}
# Link statically so the daemon never picks Debian's NSS-backed shared copy.
rm -f "$prefix"/lib/libsrtp2.so*
sed -i 's/^Libs:.*/Libs: -L${libdir} -lsrtp2 -lcrypto/' "$prefix/lib/pkgconfig/libsrtp2.pc"
grep -q openssl "$prefix/lib/pkgconfig/libsrtp2.pc" || echo "# crypto backend: openssl" >> "$prefix/lib/pkgconfig/libsrtp2.pc"
echo "build-libsrtp: libsrtp2 with OpenSSL installed in $prefix"
