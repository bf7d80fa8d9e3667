#!/usr/bin/env bash
# Installs what `make image` and `make test-image` need and `make test` does
# not, idempotently, on Debian 12: buildah (builds the Dockerfile without a
# daemon), runc (its OCI runtime here: crun, buildah's default, fails on
# this kind of host), debootstrap (makes the debian:12 base image from
# Debian's mirror when no registry is reachable) and podman (runs the image
# in make test-image). Skipped when docker with a running daemon is present.
set -euo pipefail
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  exit 0
fi
packages=(buildah runc debootstrap podman uidmap slirp4netns fuse-overlayfs)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-image-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
