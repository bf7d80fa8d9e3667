#!/usr/bin/env bash
# make image: builds the Dockerfile's gateway image (moat:latest) and its
# flood target (moat-flood:latest) with docker when a daemon answers, else
# with buildah (runc, explicit ulimits; Debian's packages, installed by
# scripts/install-image-deps.sh). Without a reachable registry the debian:12
# base is made by debootstrap from Debian's mirror and imported as
# localhost/debian:12. The build runs at nice 15 (it is long on a small
# machine) and says how long it took.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/install-image-deps.sh
image=${MOAT_IMAGE:-moat:latest}
flood_image=${MOAT_FLOOD_IMAGE:-moat-flood:latest}
started=$(date +%s)

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  nice -n 15 docker build -t "$image" .
  nice -n 15 docker build --target flood -t "$flood_image" .
else
  mirror=${DEBIAN_MIRROR:-$(grep -rhsE '^URIs:.*debian' /etc/apt/sources.list.d/*.sources | head -n1 | awk '{print $2}')}
  mirror=${mirror:-http://deb.debian.org/debian}
  base=${MOAT_BASE_IMAGE:-localhost/debian:12}
  if ! podman image exists "$base"; then
    rootfs=$(mktemp -d "${TMPDIR:-/var/tmp}/moat-debootstrap.XXXXXX")
    trap 'rm -rf "$rootfs"' EXIT
    echo "make-image: debootstrap bookworm from $mirror (no registry here)"
    nice -n 15 debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
    printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" >"$rootfs/etc/apt/sources.list.d/debian.sources"
    rm -f "$rootfs/etc/apt/sources.list"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
  fi
  # The build containers get this shell's own limits: runc cannot raise them
  # (buildah's defaults are higher than this host allows).
  nofile="$(ulimit -Hn)"
  common=(--runtime runc --ulimit "nofile=$nofile:$nofile" --format docker
          --layers --pull=never --build-arg "BASE=$base")
  nice -n 15 buildah bud "${common[@]}" -t "$image" .
  nice -n 15 buildah bud "${common[@]}" --target flood -t "$flood_image" .
fi
echo "make-image: $image and $flood_image built in $(( $(date +%s) - started )) s"
