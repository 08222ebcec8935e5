#!/bin/bash
# The flow model's sweep (issue 23, docs/simulation.md): CX864E-N plans of 2k, 4k, 8k and 16k
# GPUs; every mode and pattern over 20 seeds, dual plane and the same NICs in one plane (up
# to 8k: one plane of 16k GPUs needs a third tier), and what each failure costs a
# permutation. Writes bench/results/sim.json, sim.dat, sim.gp and sim.png.
# usage: bench/sim_sweep.sh [BUILD_DIR] [SIZES, e.g. 2048,4096] [SEEDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
sizes="${2:-2048,4096,8192,16384}"
seeds="${3:-20}"
plan_bin="$build/tools/twinrail-plan/twinrail-plan"
sim_bin="$build/tools/twinrail-sim/twinrail-sim"
out=bench/results
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
runs="$work/runs.jsonl"
: >"$runs"

# one twinrail-sim run, its JSON tagged with what the sweep asked
sim() {  # gpus planes failure pattern mode [more flags]
  local gpus=$1 planes=$2 failure=$3 pattern=$4 mode=$5
  shift 5
  local fail_args=() split=even
  [ "$failure" != none ] && fail_args=(--fail "$failure")
  # the mix under per-QP shares starves the ring behind the all-to-all's QPs until the
  # latter end (which the first allocation does not see): a NIC works through its bytes
  [ "$pattern" = mix ] && split=pooled
  local line
  if line=$("$sim_bin" --plan "$work/plan$gpus.json" --planes "$planes" --pattern "$pattern" \
      --mode "$mode" --seeds "$seeds" --split "$split" "${fail_args[@]}" --json "$@" 2>"$work/err"); then
    jq -c --argjson gpus "$gpus" --arg failure "$failure" \
      '. + {size: $gpus, failure: $failure}' <<<"$line" >>"$runs"
  else
    jq -cn --argjson gpus "$gpus" --argjson planes "$planes" --arg failure "$failure" \
      --arg pattern "$pattern" --arg mode "$mode" --arg error "$(cat "$work/err")" \
      '{size: $gpus, planes: $planes, failure: $failure, pattern: $pattern, mode: $mode,
        error: $error}' >>"$runs"
  fi
}

modes="ecmp wcmp static ars spray"
patterns="permutation allreduce alltoall mix"
for gpus in ${sizes//,/ }; do
  "$plan_bin" --gpus "$gpus" --model CX864E-N --out "$work/p$gpus" >/dev/null
  mv "$work/p$gpus/plan.json" "$work/plan$gpus.json"
  rm -rf "$work/p$gpus"
  for planes in 2 1; do
    for pattern in $patterns; do
      for mode in $modes; do
        echo "$gpus GPUs, $planes plane(s): $pattern $mode" >&2
        sim "$gpus" "$planes" none "$pattern" "$mode"
        # a single plane that the planner cannot build: once is enough to say so
        if [ "$planes" = 1 ] && tail -1 "$runs" | jq -e 'has("error")' >/dev/null; then
          break 2
        fi
      done
    done
  done
  # one plane with one QP per NIC pair: a 400G flow per NIC, the seed's section 2.2 case
  for mode in ecmp static ars; do
    echo "$gpus GPUs, 1 plane, 1 QP: permutation $mode" >&2
    sim "$gpus" 1 none permutation "$mode" --qps 1
  done
  spine_port=$(jq -r '.switches[] | select(.name=="p1-spine1") | .ports[]
      | select(.peer=="p1-leaf2") | .name' "$work/plan$gpus.json" | head -1)
  for failure in link:p1-leaf1/uplink1 "degrade:p1-spine1/$spine_port:0.25" spine:p1-spine1 \
      leaf:p1-leaf1 nicport:srv1/nic1/port1; do
    for mode in $modes; do
      echo "$gpus GPUs: $failure, $mode" >&2
      sim "$gpus" 2 "$failure" permutation "$mode"
    done
  done
done

jq -s '{
  model: "twinrail-sim, CX864E-N plans, Linux hash-threshold; 2 QPs per NIC pair unless qps says 1",
  seeds: '"$seeds"',
  runs: .,
  cost: (map(select(.failure == "none" and .planes == 2 and .qps == 2 and (has("error") | not)))
         | group_by(.size) | map({size: .[0].size, runs: length,
             seconds: (map(.seconds) | add), max_rss_mb: (map(.max_rss_mb) | max)}))
}' "$runs" >"$out/sim.json"

# the plot: permutation and all-to-all, completion over ideal (median), dual plane
jq -r '.runs | map(select(.failure == "none" and .planes == 2 and .qps == 2 and (has("error") | not)))
  | group_by(.size)[] | [.[0].size] + ([ "permutation", "alltoall" ] as $ps | ["ecmp","wcmp",
    "static","ars","spray"] as $ms | [$ps[] as $p | $ms[] as $m | (map(select(.pattern == $p
    and .mode == $m)) | .[0].completion_over_ideal.median)]) | @tsv' "$out/sim.json" \
  | { echo "gpus ecmp wcmp static ars spray ecmp wcmp static ars spray"; cat; } \
  >"$out/sim.dat"
cat >"$out/sim.gp" <<'GP'
set terminal pngcairo size 1000,440
set output 'bench/results/sim.png'
set multiplot layout 1,2 title 'twinrail-sim: job time / ideal, CX864E-N, dual plane (median of 20 seeds)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid y
set key below horizontal
set yrange [0:*]
set title 'permutation'
plot for [i=2:6] 'bench/results/sim.dat' using i:xtic(1) title columnhead(i) noenhanced
set title 'all-to-all (expert groups of 32 GPUs)'
plot for [i=7:11] 'bench/results/sim.dat' using i:xtic(1) title columnhead(i) noenhanced
unset multiplot
GP
gnuplot "$out/sim.gp"
jq -r '.cost[] | "\(.size) GPUs, dual plane, every mode and pattern (\(.runs) runs): \(.seconds) s, at most \(.max_rss_mb) MB"' "$out/sim.json" >&2
