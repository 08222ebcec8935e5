#!/bin/bash
# Installs everything twinrail builds and runs with, from Debian 12 packages only, and
# any further packages named as arguments (scripts/fuzz.sh: libFuzzer, the symbolizer).
set -euo pipefail
PACKAGES=(
  build-essential cmake pkg-config clang
  ccache libbpf-dev libnl-3-dev libnl-route-3-dev libhiredis-dev libboost-dev nlohmann-json3-dev libssl-dev
  libyang2-dev libyang2-tools python3-click
  libgtest-dev libgmock-dev googletest
  frr redis-server openssl iproute2 iputils-ping procps iperf3
  debhelper lintian
  netplan.io gnuplot-nox
  docker.io debootstrap python3-semantic-version python3-natsort
  "$@"
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The lab and the tests start their own FRR (pathspace -N) and Redis (unix socket)
  # instances, so whatever the packages start system-wide does not get in their way.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
