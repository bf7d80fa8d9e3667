#!/usr/bin/env bash
# Installs everything Moat builds and tests with, idempotently, on Debian 12:
# Debian packages, Debian's libsrtp2 source rebuilt against OpenSSL, Debian's
# libusrsctp source rebuilt with Moat's carried patch, and a project-local
# Python venv. Safe to run again; each step is skipped when done.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stamp_dir="$top/.deps"
mkdir -p "$stamp_dir"

# Build and runtime libraries, test peers and tools. Why each library:
#  libssl-dev        DTLS 1.2, HKDF/AES for SRTP+, the crypto backend of libsrtp2
#  libnice-dev       its STUN library checks and builds ICE connectivity checks
#  libsoup-3.0-dev   HTTP/WHIP/WebSocket on the GLib main loop of the control thread
#  glib-networking   GLib's TLS backend (GnuTLS): HTTPS with [http] tls_cert/tls_key
#  libjansson-dev    JSON API bodies
#  libusrsctp-dev    SCTP over DTLS (AF_CONN) for data channels; Moat links
#                    .deps/usrsctp instead (below), the package stays for its
#                    source's build dependencies and as the unpatched baseline
#  libbpf-dev, bpftool  the kernel prefilter: libbpf loads the eBPF socket filter
#                    (clang compiles it), bpftool embeds it as a skeleton header;
#                    capsh (libcap2-bin) starts it without CAP_BPF in the tests
#  chromium, simple-whip-client, coturn: independent real peers for tests
#  firefox-esr       the second browser of the room tests (headless, fake camera;
#                    no WebDriver: the test page reports its getStats itself)
#  libgstreamer-plugins-base1.0-dev  the recorder (appsrc, off the packet path)
#  docker-compose    `docker-compose config -q` checks docker-compose.yml in make test
#  janus             Janus 1.1.2 echotest: the same-run baseline of bench/paced
#  kamailio, sip-tester (SIPp), baresip  SIP peers of the VoIP tests (ng protocol)
#  rtpengine-daemon  the same-run baseline of bench/voip (user space, --table=-1)
#  gstreamer1.0-libav  G.722 for the transcoder (avenc_g722/avdec_g722)
#  libhiredis-dev, redis-server  the optional [cluster]: hiredis's async API talks
#                    to Redis on the control thread; the tests start their own
#                    redis-server (password, own port), never the system one
debian_packages=(
  build-essential pkg-config meson ninja-build clang clang-format libclang-rt-14-dev
  llvm-14 libssl-dev libglib2.0-dev libnice-dev libsoup-3.0-dev libjansson-dev
  glib-networking
  libusrsctp-dev libsrtp2-dev dpkg-dev devscripts fakeroot autoconf automake libtool
  iproute2 chromium firefox-esr simple-whip-client
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-nice libgstreamer1.0-dev
  python3-venv python3-dev libavdevice-dev libavfilter-dev libopus-dev libvpx-dev
  libsrtp2-1 curl ca-certificates zlib1g-dev libbpf-dev bpftool libcap2-bin
  janus
  libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base-apps coturn docker-compose
  kamailio kamailio-extra-modules sip-tester baresip rtpengine-daemon gstreamer1.0-libav
  libhiredis-dev redis-server
)
# One dpkg-query for all of them (one per package took seconds).
mapfile -t installed < <(dpkg-query -W -f='${Package} ${Status}\n' "${debian_packages[@]}" \
  2>/dev/null | awk '/ install ok installed$/ { print $1 }')
missing=()
for p in "${debian_packages[@]}"; do
  [[ " ${installed[*]} " == *" $p "* ]] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The libraries rebuilt from Debian's sources and the test venv are built
# once per machine into a cache ($MOAT_DEPS_CACHE, default
# ~/.cache/moat/deps) under a key of what decides their contents (the build
# script, its patches, the Debian package's version; the requirements file
# and Python), and a checkout links .deps/NAME and .venv to them: a fresh
# clone rebuilds nothing. A checkout whose .deps/NAME or .venv is a real
# folder (made before the cache) keeps using it.
cache_home="${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}"
deps_cache="${MOAT_DEPS_CACHE:-${cache_home:+$cache_home/moat/deps}}"
# No home (or one that cannot be written): the cache lives in the checkout.
if [ -z "$deps_cache" ] || ! mkdir -p "$deps_cache" 2>/dev/null || [ ! -w "$deps_cache" ]; then
  deps_cache="$top/.deps/cache"
fi

# cached_dep NAME SCRIPT PACKAGE: .deps/NAME as SCRIPT builds it (the
# scripts honour MOAT_DEPS_PREFIX, build-usrsctp.sh USRSCTP_PREFIX).
cached_dep() {
  local name=$1 script=$2 package=$3 local_prefix="$top/.deps/$1" key target
  if [ -d "$local_prefix" ] && [ ! -L "$local_prefix" ]; then
    MOAT_DEPS_PREFIX="$local_prefix" USRSCTP_PREFIX="$local_prefix" "$script"
    return
  fi
  key=$( (cat "$script" "$top/scripts/lib/debian-source.sh" "$top"/scripts/patches/*
          dpkg-query -W -f='${Version}' "$package") | sha256sum | cut -c1-16)
  target="$deps_cache/$name-$key"
  mkdir -p "$deps_cache"
  (
    flock 9
    MOAT_DEPS_PREFIX="$target" USRSCTP_PREFIX="$target" "$script"
  ) 9>"$deps_cache/$name.lock"
  ln -sfn "$target" "$local_prefix"
}

# libsrtp2 with OpenSSL (see the script).
cached_dep libsrtp "$top/scripts/build-libsrtp.sh" libsrtp2-dev
# usrsctp: Debian's libusrsctp 0.9.5 source, built as Debian builds it
# (autotools, dpkg-buildflags, configure's default --enable-debug with
# SCTP_DEBUG) but at -O2 -fno-strict-aliasing instead of configure's -O0
# (16-23% less CPU per byte, see the script), plus
# scripts/patches/usrsctp-express-sack-t3-restart.patch and
# usrsctp-copy-small-chunks.patch, static into
# .deps/usrsctp (the Makefile puts it on PKG_CONFIG_PATH). The first
# patch makes the fast SACK path restart the T3-rtx timer when the
# cumulative ack moves (RFC 9260 §6.3.2 R3); without it every long-RTT bulk
# transfer takes a spurious timeout and restarts from a one-packet window.
# The second copies small received DATA chunks out of the packet (its
# cluster, or its plain mbufs when it is a packet's last chunk), so held
# chunks pin about what the receive window charges them.
# Patching Debian's source keeps the distribution's version and build; a
# newer upstream release would not fix it (upstream master has the same
# code) and would be a download from outside Debian. Rebuilt when the patch
# or the flags change (the prefix keeps the patch's sha256 and the flags).
cached_dep usrsctp "$top/scripts/build-usrsctp.sh" libusrsctp-dev
cached_dep libnice-noupnp "$top/scripts/build-libnice-noupnp.sh" libnice-dev
# libsoup3: Debian's 3.2.3 source with
# scripts/patches/libsoup-server-free-path-on-unreadable-body.patch (its
# server leaked the path of every request it refused itself: anyone could
# grow the gateway's memory by about 200 MB a second), shared, same soname,
# into .deps/libsoup; the build tree's binaries load it through their rpath.
cached_dep libsoup "$top/scripts/build-libsoup.sh" libsoup-3.0-dev

# Python venv for the end-to-end tests (aiortc is an independent WebRTC
# stack): one per requirements file and Python, cached like the libraries.
venv="$top/.venv"
req="$top/tests/requirements.txt"
install_requirements() {
  "$1/bin/pip" install -q --upgrade pip
  "$1/bin/pip" install -q -r "$req"
  cp "$req" "$1/moat-requirements.txt"
}
if [ -d "$venv" ] && [ ! -L "$venv" ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  cmp -s "$req" "$venv/moat-requirements.txt" 2>/dev/null || install_requirements "$venv"
else
  key=$( (cat "$req"; python3 --version) | sha256sum | cut -c1-16)
  target="$deps_cache/venv-$key"
  mkdir -p "$deps_cache"
  (
    flock 9
    if ! cmp -s "$req" "$target/moat-requirements.txt" 2>/dev/null; then
      rm -rf "$target"
      python3 -m venv "$target"
      install_requirements "$target"
    fi
  ) 9>"$deps_cache/venv.lock"
  ln -sfn "$target" "$venv"
fi
