#!/bin/bash
# Configures and builds twinrail into build/ (warnings are errors).
#   --sanitize   the AddressSanitizer + UndefinedBehaviorSanitizer tree, build-asan/: only
#                the daemons and the tests that scripts/test.sh runs there, at -O0. GCC's
#                UBSan instrumentation is what makes an optimised sanitizer build slow: -O0
#                compiles in about half the time of -O1 (pathqd_test.cpp 10.9 s against
#                21.2 s), loses no report, and its tests ran in 156 s against 131 s.
# TWINRAIL_CORE_UNIT_TESTS=OFF in the environment leaves the daemons' unit tests out of
# build/ (scripts/test.sh: they build and run in build-asan/); any other run builds them.
# Both trees carry line tables only (-g1): enough for every stack trace a failing test or a
# sanitizer prints, and much less to compile and link than full debug info. The .deb is
# built by dpkg-buildpackage with Debian's own flags.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --sanitize ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWINRAIL_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" >/dev/null
  cmake --build build-asan -j"$(nproc)" --target hostrouted pathqd unit_tests pathqd_unit_tests \
    planesteer_unit_tests \
    hostrouted_ops_it pathqd_ops_it netlink_it
  exit 0
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DTWINRAIL_CORE_UNIT_TESTS="${TWINRAIL_CORE_UNIT_TESTS:-ON}" >/dev/null
cmake --build build -j"$(nproc)"
