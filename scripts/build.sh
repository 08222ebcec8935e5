#!/bin/bash
# Configures and builds twinrail into build/ (warnings are errors).
#   --sanitize   the AddressSanitizer + UndefinedBehaviorSanitizer tree, build-asan/: only
#                the daemons and the tests that scripts/test.sh runs there, at -O0. GCC's
#                UBSan instrumentation is what makes an optimised sanitizer build slow: -O0
#                compiles in about half the time of -O1 (pathqd_test.cpp 10.9 s against
#                21.2 s), loses no report, and its tests ran in 156 s against 131 s.
# TWINRAIL_SANITIZER_SUITE=OFF in the environment leaves the daemons' unit tests and their
# integration-asan tests out of build/ (scripts/test.sh: they build and run in build-asan/);
# any other run builds them. TWINRAIL_BENCH=OFF leaves bench/ out (scripts/test.sh runs no
# benchmark).
# Both trees carry line tables only (-g1): enough for every stack trace a failing test or a
# sanitizer prints, and much less to compile and link than full debug info. build/ uses the
# flags dpkg-buildpackage gives the .deb, so the tests run the product's code as it ships.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --sanitize ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWINRAIL_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" >/dev/null
  cmake --build build-asan -j"$(nproc)" --target hostrouted pathqd arsd unit_tests \
    pathqd_unit_tests planesteer_unit_tests arsd_unit_tests \
    hostrouted_ops_it pathqd_ops_it netlink_it ars_lab_it
  exit 0
fi
# build/ compiles with the Debian package's own flags (-O2 -g1, hardening), through ccache:
# scripts/package.sh then finds every product object in the cache (scripts/debian-flags.sh).
source scripts/debian-flags.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$TWINRAIL_DEB_CXXFLAGS" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$TWINRAIL_CCACHE_LAUNCHER" \
  -DTWINRAIL_SANITIZER_SUITE="${TWINRAIL_SANITIZER_SUITE:-ON}" \
  -DTWINRAIL_BENCH="${TWINRAIL_BENCH:-ON}" >/dev/null
cmake --build build -j"$(nproc)"
