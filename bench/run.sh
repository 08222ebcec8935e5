#!/bin/bash
# Runs the benchmarks on the namespace fabrics and writes bench/results/*.json (root).
# usage: bench/run.sh [hostrouted|pathqd|pathqd-scale|frr-floor|lb|polarisation|sonic|ecn|lab|frr-restart|matrix|soak-bench|soak|sim|all] [hostrouted sizes, e.g. 1000,10000,100000]
#   soak (not in all: 15 min or more): bench/run.sh soak [SECONDS]
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
if [ "$what" = all ] || [ "$what" = pathqd-scale ]; then
  build/bench/pathqd_scale "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/pathqd_scale.json "${2:-16384,100000}"
fi
if [ "$what" = all ] || [ "$what" = frr-floor ]; then
  build/bench/frr_floor "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/frr_floor.json 20
fi
if [ "$what" = all ] || [ "$what" = lb ]; then
  # every mode, reordering and the flowlet idle sweep in one run (docs/load-balancing.md)
  build/bench/lb_bench "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    "$PWD/build/daemons/arsd/arsd" "$PWD/build/bench/udp_seq_probe" bench/results/lb.json 5 3
fi
if [ "$what" = all ] || [ "$what" = polarisation ]; then
  # equal vs distinct fib_multipath_hash_seed, single vs dual plane (docs/load-balancing.md)
  build/bench/polarisation_bench "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    "$PWD/build/bench/udp_seq_probe" "$PWD/build/bench/clear_hash.o" \
    bench/results/polarisation.json 6
fi
if [ "$what" = all ] || [ "$what" = ecn ]; then
  build/bench/ecn_bench "$PWD/build/daemons/pathqd/pathqd" bench/results/ecn.json
fi
if [ "$what" = all ] || [ "$what" = lab ]; then
  build/bench/lab_failover_bench "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/lab_failover.json 10
fi
if [ "$what" = all ] || [ "$what" = sonic ]; then
  build/bench/sonic_util_bench bench/results/sonic_util.json 60
fi
if [ "$what" = all ] || [ "$what" = frr-restart ]; then
  build/bench/frr_restart_bench "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/frr_restart.json 5
fi
if [ "$what" = all ] || [ "$what" = matrix ]; then
  build/bench/failure_matrix "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/failure_matrix.json bond,routed,evpn-mh "$PWD/build/daemons/planesteer/planesteer" \
    bench/results/failure_matrix_before.json
fi
if [ "$what" = all ] || [ "$what" = soak-bench ]; then
  build/bench/soak_bench "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/soak_bench.json
fi
if [ "$what" = all ] || [ "$what" = sim ]; then
  # the flow model at 2k-16k GPUs (no root, no lab): docs/simulation.md
  bench/sim_sweep.sh build
fi
if [ "$what" = soak ]; then
  build/bench/chaos_soak "$PWD/build/lab/tool/twinrail-lab" \
    "$PWD/build/daemons/hostrouted/hostrouted" "$PWD/build/daemons/pathqd/pathqd" \
    bench/results/chaos_soak.json "${2:-900}"
fi
