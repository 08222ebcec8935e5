#!/bin/bash
# Builds twinrail as a SONiC Application Extension (docs/sonic-package.md): a Docker image
# of hostrouted and pathqd, labelled with the manifest and the YANG modules, saved as a
# gzipped tarball for `sonic-package-manager install --from-tarball`.
#   1. the manifest and labels, from the tree (packaging/sonic/gen_manifest.py), into
#      build/sonic/ (manifest.json, labels.json): always, with or without Docker;
#   2. the .deb: --deb FILE, or built now by scripts/package.sh;
#   3. the base image: debian:bookworm-slim when it is here or a registry gives it, else
#      twinrail-sonic-base:bookworm, made here from Debian's packages (debootstrap of a
#      minimal bookworm with the .deb's dependencies, then docker import; made once);
#   4. docker build + docker save | gzip -> build/sonic/twinrail_<version>.tar.gz, when a
#      Docker daemon answers (`docker info`); otherwise it says so and exits 69.
# usage: scripts/sonic-package.sh [--deb FILE]
# Exit codes: 64 usage, 65/66 bad or missing source (from the generator), 69 no Docker
# daemon, 1 a build step failed.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 [--deb FILE]" >&2; exit 64; }
deb=""
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) [ $# -ge 2 ] || usage; deb="$2"; shift 2 ;;
        -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
        *) usage ;;
    esac
done

out=build/sonic
mkdir -p "$out"
echo "== manifest and labels ($out/manifest.json, $out/labels.json)"
/usr/bin/python3 packaging/sonic/gen_manifest.py --out-dir "$out"
version=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["package"]["version"])' \
          "$out/manifest.json")
echo "  twinrail $version"

echo "== Docker daemon"
if ! command -v docker >/dev/null 2>&1; then
    echo "  no docker command: the image cannot be built here (manifest and labels are in $out)" >&2
    exit 69
fi
if ! docker info >/dev/null 2>&1; then
    echo "  docker info fails: no Docker daemon answers on this machine, so the image cannot" >&2
    echo "  be built here. The manifest and labels are in $out; run this script where" >&2
    echo "  'docker info' succeeds (a CI runner with Docker, or a workstation)." >&2
    exit 69
fi

if [ -z "$deb" ]; then
    echo "== the .deb (scripts/package.sh)"
    scripts/package.sh
    deb=$(find build/deb -maxdepth 1 -name "twinrail_${version}_*.deb" -print -quit)
fi
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
    echo "  no .deb of twinrail $version (${deb:-build/deb/twinrail_${version}_*.deb})" >&2
    exit 66
fi
deb_version=$(dpkg-deb --field "$deb" Version)
if [ "$deb_version" != "$version" ]; then
    echo "  $deb is version $deb_version; debian/changelog says $version" >&2
    exit 65
fi

# The base: the registry's, else one made from Debian's packages (no registry here).
readonly SELF_BASE=twinrail-sonic-base:bookworm
base=debian:bookworm-slim
if ! docker image inspect "$base" >/dev/null 2>&1 && ! timeout 60 docker pull "$base" >/dev/null 2>&1; then
    base=$SELF_BASE
    if ! docker image inspect "$base" >/dev/null 2>&1; then
        echo "== base image $base: debootstrap bookworm (no registry answered for debian:bookworm-slim)"
        mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
        root=$(mktemp -d /tmp/twinrail-sonic-root.XXXXXX)
        # The .deb's own dependencies and the image's, so the build downloads nothing
        # (the sysusers one as systemd-standalone-sysusers: no systemd in a container).
        deps=$(dpkg-deb --field "$deb" Depends | tr -d ' ' | tr ',' '\n' |
               grep -v 'sysusers' | sed 's/(.*)//; s/|.*//' | grep -v '^\$' | paste -sd, -)
        debootstrap --variant=minbase --include="$deps,systemd-standalone-sysusers,supervisor" \
            bookworm "$root" "${mirror:-http://deb.debian.org/debian}" >build/sonic/debootstrap.log 2>&1 ||
            { tail -20 build/sonic/debootstrap.log; rm -rf "$root"; exit 1; }
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
        tar -C "$root" -c . | docker import - "$base" >/dev/null
        rm -rf "$root"
    fi
fi
echo "  base: $base"

echo "== docker build"
context=$(mktemp -d /tmp/twinrail-sonic.XXXXXX)
trap 'rm -rf "$context"' EXIT
cp -a packaging/sonic/Dockerfile packaging/sonic/supervisord.conf \
      packaging/sonic/critical_processes packaging/sonic/entrypoint.sh packaging/sonic/cli \
      "$context/"
cp "$deb" "$context/twinrail.deb"
# One `--label key=value` per label, NUL-separated: the values are whole YANG modules.
mapfile -d '' label_args < <(/usr/bin/python3 -c '
import json, sys
for key, value in json.load(open(sys.argv[1])).items():
    sys.stdout.write("--label\0" + key + "=" + value + "\0")' "$out/labels.json")
image="twinrail:$version"
docker build --quiet --build-arg BASE="$base" --tag "$image" "${label_args[@]}" "$context"

tarball="$out/twinrail_$version.tar.gz"
echo "== docker save -> $tarball"
docker save "$image" | gzip >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
echo "== done: $tarball"
echo "   on the switch: sonic-package-manager install --from-tarball $(basename "$tarball")"
