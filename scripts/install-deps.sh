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
#  chromium, simple-whip-client, coturn, redis-server: independent real peers for tests
#  libgstreamer-plugins-base1.0-dev  the recorder (appsrc, off the packet path)
#  docker-compose    `docker-compose config -q` checks docker-compose.yml in make test
#  janus             Janus 1.1.2 echotest: the same-run baseline of bench/paced
#  kamailio, sip-tester (SIPp), baresip  SIP peers of the VoIP tests (ng protocol)
#  rtpengine-daemon  the same-run baseline of bench/voip (user space, --table=-1)
#  gstreamer1.0-libav  G.722 for the transcoder (avenc_g722/avdec_g722)
debian_packages=(
  build-essential pkg-config meson ninja-build clang clang-format libclang-rt-14-dev
  llvm-14 libssl-dev libglib2.0-dev libnice-dev libsoup-3.0-dev libjansson-dev
  glib-networking
  libusrsctp-dev libsrtp2-dev dpkg-dev devscripts fakeroot autoconf automake libtool
  iproute2 chromium simple-whip-client
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-nice libgstreamer1.0-dev
  python3-venv python3-dev libavdevice-dev libavfilter-dev libopus-dev libvpx-dev
  libsrtp2-1 curl ca-certificates zlib1g-dev libbpf-dev bpftool libcap2-bin
  janus
  libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base-apps coturn docker-compose
  kamailio kamailio-extra-modules sip-tester baresip rtpengine-daemon gstreamer1.0-libav
)
missing=()
for p in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

"$top/scripts/build-libsrtp.sh"
# usrsctp: Debian's libusrsctp 0.9.5 source, built as Debian builds it
# (autotools, dpkg-buildflags, configure's default --enable-debug with
# SCTP_DEBUG) but at -O2 -fno-strict-aliasing instead of configure's -O0
# (16-23% less CPU per byte, see the script), plus
# scripts/patches/usrsctp-express-sack-t3-restart.patch, static into
# .deps/usrsctp (the Makefile puts it on PKG_CONFIG_PATH). The
# patch makes the fast SACK path restart the T3-rtx timer when the
# cumulative ack moves (RFC 9260 §6.3.2 R3); without it every long-RTT bulk
# transfer takes a spurious timeout and restarts from a one-packet window.
# Patching Debian's source keeps the distribution's version and build; a
# newer upstream release would not fix it (upstream master has the same
# code) and would be a download from outside Debian. Rebuilt when the patch
# or the flags change (the prefix keeps the patch's sha256 and the flags).
"$top/scripts/build-usrsctp.sh"
"$top/scripts/build-libnice-noupnp.sh"

# Python venv for the end-to-end tests (aiortc is an independent WebRTC stack).
venv="$top/.venv"
req="$top/tests/requirements.txt"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! cmp -s "$req" "$stamp_dir/requirements.txt" 2>/dev/null; then
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r "$req"
  cp "$req" "$stamp_dir/requirements.txt"
fi
