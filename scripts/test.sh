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
# Memory safety as a gate: every unit test, and the daemons' own namespace tests (label
# integration-asan: SIGTERM loops, bad input, Redis outages, interrupted dumps), again with ASan and
# UBSan. A sanitizer report fails the test (UBSan does not recover; ASan aborts).
scripts/build.sh --sanitize
(
  cd build-asan
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  ctest --output-on-failure -j"$(nproc)" -L unit
  ctest --output-on-failure -L integration-asan
)
# The Debian package: build, contents, lintian, systemd-analyze verify/security. On CI's
# throwaway machine (CI set) also install, check and purge it.
scripts/package.sh ${CI:+--install}
scripts/fuzz.sh --smoke
