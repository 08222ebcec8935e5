#!/bin/bash
# Runs the benchmarks on the namespace fabrics and writes bench/results/*.json (root).
# usage: bench/run.sh [hostrouted|pathqd|lab|all] [hostrouted sizes, e.g. 1000,10000,100000]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
mkdir -p bench/results
what="${1:-all}"
if [ "$what" = all ] || [ "$what" = hostrouted ]; then
  build/bench/hostrouted_bench "$PWD/build/daemons/hostrouted/hostrouted" \
    bench/results/hostrouted.json "${2:-1000,10000,100000}"
fi
if [ "$what" = all ] || [ "$what" = pathqd ]; then
  build/bench/pathqd_bench "$PWD/build/daemons/pathqd/pathqd" bench/results/pathqd.json 20
fi
if [ "$what" = all ] || [ "$what" = lab ]; then
  build/bench/lab_failover_bench "$PWD/build/tools/twinrail-lab/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/lab_failover.json 10
fi
