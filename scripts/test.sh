#!/bin/bash
# Installs, builds, and runs every test: unit tests, then the namespace integration tests
# (real FRR, real Redis, real netlink; root needed). Each test starts and removes its own
# FRR instances, Redis servers and namespaces, so no system service has to run.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: the integration tests use network namespaces" >&2; exit 77; }
scripts/deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" -L unit
# Namespace tests one at a time: each runs a whole fabric of FRR daemons.
ctest --output-on-failure -L integration
cd ..
# The Debian package: build, contents, lintian, systemd-analyze verify/security. On CI's
# throwaway machine (CI set) also install, check and purge it.
scripts/package.sh ${CI:+--install}
