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

# patch_lines PATCH...: one "patch: NAME SHA256" line each, for a build
# stamp (a prefix's moat-build-stamp says what it was built from).
patch_lines() {
  local p
  for p in "$@"; do
    echo "patch: $(basename "$p") $(sha256sum "$p" | cut -d' ' -f1)"
  done
}

# stamp_current PREFIX TEXT FILE...: true when PREFIX holds every FILE (paths
# under it) and its moat-build-stamp reads TEXT: nothing to rebuild.
stamp_current() {
  local prefix=$1 text=$2 f
  shift 2
  for f in "$@"; do
    [ -f "$prefix/$f" ] || return 1
  done
  [ "$(cat "$prefix/moat-build-stamp" 2>/dev/null)" = "$text" ]
}

# unpack_patched PACKAGE WORK PATCH...: Debian's source of PACKAGE (its own
# quilt series applied by apt-get source) unpacked into WORK, then each
# PATCH applied in order; sets `src` to the source folder and enters it.
unpack_patched() {
  local package=$1 work=$2 p
  shift 2
  fetch_debian_source "$package" "$work"
  src=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name "$package-*" | head -n1)
  cd "$src"
  for p in "$@"; do
    patch -s -p1 <"$p"
  done
}
