#!/bin/bash
# Installs, builds, and runs every test: unit tests, then the namespace integration tests
# (real FRR, real Redis, real netlink; root needed). Each test starts and removes its own
# FRR instances, Redis servers and namespaces, so no system service has to run.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: the integration tests use network namespaces" >&2; exit 77; }
phase() { echo "== $1 ($(date -u +%T), $SECONDS s in)"; }
phase "packages"
scripts/deps.sh libclang-rt-14-dev llvm  # the fuzz tree's too, so it can build early
phase "build"
scripts/build.sh
cd build
phase "unit tests"
ctest --output-on-failure -j"$(nproc)" -L unit
# The sanitizer tree builds meanwhile, at nice 19: the namespace tests wait on FRR's timers
# far more than they compute, and nice 19 yields the CPU to them whenever they want it.
(nice -n 19 ../scripts/build.sh --sanitize >asan-build.log 2>&1) &
asan_build=$!
# Namespace tests one at a time: each runs a whole fabric of FRR daemons.
phase "namespace tests"
rc=0
ctest --output-on-failure -L integration || rc=$?
phase "waiting for the sanitizer build"
wait "$asan_build" || { tail -40 asan-build.log; echo "sanitizer build failed" >&2; exit 1; }
[ "$rc" = 0 ] || exit "$rc"
cd ..
# Memory safety as a gate: every unit test, and the daemons' own namespace tests (label
# integration-asan: SIGTERM loops, bad input, Redis outages, interrupted dumps), again with ASan and
# UBSan. A sanitizer report fails the test (UBSan does not recover; ASan aborts). The fuzz
# tree builds meanwhile, niced the same way.
(nice -n 19 scripts/fuzz.sh --build-only >build/fuzz-build.log 2>&1) &
fuzz_build=$!
phase "sanitizer tests"
rc=0
(
  cd build-asan
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  ctest --output-on-failure -j"$(nproc)" -L unit
  ctest --output-on-failure -L integration-asan
) || rc=$?
wait "$fuzz_build" || { tail -40 build/fuzz-build.log; echo "fuzz build failed" >&2; exit 1; }
[ "$rc" = 0 ] || exit "$rc"
# The Debian package: build, contents, lintian, systemd-analyze verify/security. On CI's
# throwaway machine (CI set) also install, check and purge it.
phase "package"
scripts/package.sh ${CI:+--install}
phase "fuzz smoke"
scripts/fuzz.sh --smoke
phase "done"
