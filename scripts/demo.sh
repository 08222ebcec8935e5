#!/bin/bash
# The main job: install, build, and run the namespace lab demo (needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: network namespaces and FRR need it" >&2; exit 77; }
scripts/deps.sh
scripts/build.sh
exec build/tools/twinrail-lab/twinrail-lab demo --hostrouted "$PWD/build/daemons/hostrouted/hostrouted"
