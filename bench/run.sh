#!/bin/bash
# Runs the benchmarks on the namespace fabric and writes bench/results/*.json (root).
# usage: bench/run.sh [sizes, e.g. 1000,10000,100000]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
mkdir -p bench/results
build/bench/hostrouted_bench "$PWD/build/daemons/hostrouted/hostrouted" \
  bench/results/hostrouted.json "${1:-1000,10000,100000}"
