#!/bin/bash
# Configures and builds twinrail into build/ (warnings are errors).
#   --sanitize   the AddressSanitizer + UndefinedBehaviorSanitizer tree, build-asan/: only
#                the daemons and the tests that scripts/test.sh runs there.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --sanitize ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWINRAIL_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$(nproc)" --target hostrouted pathqd unit_tests pathqd_unit_tests \
    hostrouted_ops_it pathqd_ops_it netlink_it
  exit 0
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
