# Sourced by the scripts that rebuild a Debian source package
# (build-libsrtp.sh, build-usrsctp.sh, build-libnice-noupnp.sh).
# ensure_deb_src: `apt-get source` needs a deb-src entry; add one mirroring
# the configured archive when there is none (Debian's archive only).
ensure_deb_src() {
  grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
  local uri
  uri=$(grep -rhsE '^URIs:' /etc/apt/sources.list.d/*.sources | head -n1 | awk '{print $2}')
  [ -n "$uri" ] || uri=$(grep -hsE '^deb ' /etc/apt/sources.list | head -n1 | awk '{print $2}')
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  cat >/etc/apt/sources.list.d/moat-deb-src.sources <<SRC
Types: deb-src
URIs: $uri
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -qq
}

# fetch_debian_source PACKAGE DIR: unpacks Debian's source of PACKAGE into
# DIR (quietly, or with apt's messages when the quiet try fails).
fetch_debian_source() {
  ensure_deb_src
  (cd "$2" && apt-get source -qq "$1" >/dev/null 2>&1 || apt-get source "$1")
}
