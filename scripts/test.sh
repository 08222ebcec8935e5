#!/bin/bash
# Installs, builds, and runs every test: unit tests, then the namespace integration tests
# (real FRR, real Redis, real netlink; root needed). Each test starts and removes its own
# FRR instances, Redis servers and namespaces, so no system service has to run.
#
# The phases run one after the other. Building the sanitizer tree (even at nice 19) while
# the namespace tests ran was tried: it slowed a routed leaf failover in LabSmoke from about
# 0.2 s to 2.8 s and failed it once, so the builds stay out of the tests' way.
set -euo pipefail
cd "$(dirname "$0")/.."
# The exit trap runs wherever a failure left the shell (build/ during the tests): absolute.
root=$PWD
[ "$(id -u)" = 0 ] || { echo "run as root: the integration tests use network namespaces" >&2; exit 77; }
phase() { echo "== $1 ($(date -u +%T), $SECONDS s in)"; }
phase "packages"
scripts/deps.sh
# The SONiC layout's FRR runs in containers (as the bgp container on a switch): a Docker
# engine, stopped at the end if this run started it, with the lab's FRR image.
if [ "$(scripts/dockerd.sh start)" = started ]; then
  trap 'docker image rm --force twinrail-lab-frr:1 twinrail-sonic-base:bookworm \
          $(docker images --format "{{.Repository}}:{{.Tag}}" twinrail) >/dev/null 2>&1 || true
        "$root"/scripts/dockerd.sh stop || true' EXIT
fi
phase "build"
# The daemons' unit tests and their own namespace tests (label integration-asan) are built
# and run once, in build-asan/ below, under ASan + UBSan.
# No benchmarks: this command runs none (bench/run.sh builds them).
TWINRAIL_SANITIZER_SUITE=OFF TWINRAIL_BENCH=OFF scripts/build.sh
cd build
phase "unit tests"
ctest --output-on-failure -j"$(nproc)" -L unit
# Namespace tests one at a time: each runs a whole fabric of FRR daemons.
phase "namespace tests"
ctest --output-on-failure -L integration
cd ..
# Memory safety as a gate: the daemons' unit tests, and their own namespace tests (label
# integration-asan: SIGTERM loops, bad input, Redis outages, interrupted dumps), again with ASan and
# UBSan. A sanitizer report fails the test (UBSan does not recover; ASan aborts).
# The sanitizer tree compiles (CPU) while the package is built and checked and the SONiC
# image is made (mostly waiting on dpkg, debootstrap's downloads and Docker): side by side,
# after the namespace tests, whose timing a build beside them disturbs. Neither writes the
# other's files (build-asan/ against build/deb, build/sonic).
phase "sanitizer build; beside it the package and the SONiC package image"
asan_log=build/sanitizer-build.log
# Its own process group (setsid), so a failure beside it stops the whole build, make and
# compilers included.
setsid scripts/build.sh --sanitize >"$asan_log" 2>&1 &
asan_pid=$!
# The Debian package: build, contents, lintian, systemd-analyze verify/security. On CI's
# throwaway machine (CI set) also install, check and purge it. Then the SONiC Application
# Extension image, built from that .deb.
if ! { scripts/package.sh ${CI:+--install} &&
       scripts/sonic-package.sh --deb "$(ls build/deb/twinrail_*.deb | head -n 1)"; }; then
  kill -- -"$asan_pid" 2>/dev/null || true
  wait "$asan_pid" || true
  exit 1
fi
wait "$asan_pid" || { cat "$asan_log"; echo "sanitizer build failed" >&2; exit 1; }
tail -n 1 "$asan_log"
phase "sanitizer tests"
(
  cd build-asan
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  ctest --output-on-failure -j"$(nproc)" -L unit
  ctest --output-on-failure -L integration-asan
)
# The SONiC package's image run on the lab's SONiC layout.
phase "SONiC package image test"
(cd build && ctest --output-on-failure -L sonic-image)
phase "fuzz smoke"
scripts/fuzz.sh --smoke
phase "done"
