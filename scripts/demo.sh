#!/bin/bash
# The main job: install, build, and run the dual-plane lab demo (needs root): the planner's
# lab plan built in namespaces with real FRR, Redis, hostrouted and pathqd, a short tour
# (host routes per plane, WCMP weights, STATE_DB, a leaf and a NIC port failing under
# traffic), then everything removed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: network namespaces and FRR need it" >&2; exit 77; }
scripts/deps.sh
scripts/build.sh
exec build/lab/tool/twinrail-lab demo --name demo \
  --hostrouted "$PWD/build/daemons/hostrouted/hostrouted" --pathqd "$PWD/build/daemons/pathqd/pathqd"
