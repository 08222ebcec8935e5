#!/bin/bash
# Coverage-guided fuzzing (libFuzzer + ASan + UBSan) of every parser that reads bytes from
# outside: INT reports and shims, rtnetlink decoders, both daemons' configs, the plan
# file, FRR's running config. Targets and what each checks: fuzz/README.md.
#
#   scripts/fuzz.sh [--smoke]                 every target over its seeds, ~14 s each (test gate)
#   scripts/fuzz.sh --long [--runs N] [T...]  each target (or T...) for N executions (10M);
#                                             writes bench/results/fuzz.json
#   scripts/fuzz.sh --long --report-only      rewrite fuzz.json from the last long run's logs
#                                             (e.g. after stopping a target with SIGINT)
#
# Installs clang/libFuzzer if missing, builds build-fuzz/ (clang, a tree of its own), and
# fails on any crash, leak, undefined behaviour, invariant violation or hang, printing the
# reproducer and the command that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=smoke
runs=10000000
report_only=0
only=()
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) mode=smoke ;;
        --long) mode=long ;;
        --runs) runs="$2"; shift ;;
        --report-only) report_only=1 ;;
        -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "usage: scripts/fuzz.sh [--smoke | --long [--runs N] [TARGET...]]" >&2; exit 64 ;;
        *) only+=("$1") ;;
    esac
    shift
done

# --- what it needs: the project's build deps, plus clang, libFuzzer and the symbolizer.
if [ "$(id -u)" = 0 ]; then
    scripts/deps.sh libclang-rt-14-dev llvm
fi
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ missing (run as root to install)" >&2; exit 69; }

# --- build: only the fuzz targets and the code they reach.
# -O1 -g1, as libFuzzer's own instructions build: 12% less compile time than -O2 -g here, the
# same stacks (line tables) in a report.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTWINRAIL_FUZZ=ON -DTWINRAIL_TESTS=OFF >/dev/null
cmake --build build-fuzz --target fuzz_all -j"$(nproc)" >build-fuzz/build.log 2>&1 ||
    { tail -40 build-fuzz/build.log; echo "fuzz.sh: build failed (build-fuzz/build.log)" >&2; exit 1; }

# Longest input each target takes: the format's own bound where it has one (an INT report
# datagram is refused past 4096 bytes, a shim is at most 4 + 255 * 4), else a little above
# the largest real seed.
declare -A MAXLEN=([int_report]=4200 [int_shim]=1100 [netlink_decode]=4096 [netlink_stats]=4096
    [hostrouted_config]=4096 [pathqd_config]=4096 [plan]=8192 [running_config]=2048
    [echo_frame]=1600 [evpn_view]=8192 [sonic_sku]=8192 [docker_stream]=4096
    [sonic_check]=8192)
targets=()
for bin in build-fuzz/fuzz/*_fuzz; do
    t=$(basename "$bin" _fuzz)
    if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $t "* ]]; then continue; fi
    targets+=("$t")
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: no fuzz target selected" >&2; exit 64; }

# Allocation stacks off: half the cost of every malloc. A reproducer is replayed below with
# full stacks. UBSan findings abort (the build uses -fno-sanitize-recover) and print stacks.
export ASAN_OPTIONS=malloc_context_size=0:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1
jobs_max=2 # two targets at a time: the machines have 2 cores

# run TARGET DIR ARGS...: one libFuzzer process; its log is DIR/log.
run() {
    local t=$1 dir=$2
    shift 2
    local args=(-max_len="${MAXLEN[$t]:-4096}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$dir/artifacts/")
    [ -f "fuzz/dict/$t.dict" ] && args+=(-dict="fuzz/dict/$t.dict")
    mkdir -p "$dir/corpus" "$dir/artifacts"
    local start=$SECONDS
    set +e
    local seeds=()
    [ -d "fuzz/corpus/$t" ] && seeds=("fuzz/corpus/$t")
    "build-fuzz/fuzz/${t}_fuzz" "${args[@]}" "$@" "$dir/corpus" "${seeds[@]}" >"$dir/log" 2>&1
    echo $? >"$dir/rc"
    set -e
    echo $((SECONDS - start)) >"$dir/wall"
}

# report TARGET DIR: 0 if the run was clean, else the finding, its reproducer and replay.
report() {
    local t=$1 dir=$2 rc
    rc=$(cat "$dir/rc")
    local done_line
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$dir/log" | tail -1 || true)
    if [ "$rc" = 0 ]; then
        printf '  %-18s ok  %4ss  %s\n' "$t" "$(cat "$dir/wall")" "${done_line#*DONE }"
        return 0
    fi
    # 72: libFuzzer stopped by SIGINT (by hand), not by a finding.
    if [ "$rc" = 72 ] && [ -z "$(ls -A "$dir/artifacts" 2>/dev/null)" ]; then
        echo "  $t interrupted after $(grep -E '^stat::number_of_executed_units:' "$dir/log" |
            awk '{print $2}') executions, no finding"
        return 0
    fi
    echo "  $t FAILED (exit $rc):"
    grep -E 'ERROR:|runtime error:|fuzz invariant|SUMMARY:|Test unit written|timeout' "$dir/log" | head -12 | sed 's/^/    /'
    for a in "$dir"/artifacts/*; do
        [ -f "$a" ] || continue
        echo "    reproducer: $a"
        echo "    replay:     build-fuzz/fuzz/${t}_fuzz $a"
        ASAN_OPTIONS=malloc_context_size=30 "build-fuzz/fuzz/${t}_fuzz" "$a" >"$dir/replay.log" 2>&1 || true
        echo "    replayed with full stacks: $dir/replay.log"
    done
    echo "    log: $dir/log"
    return 1
}

# run_all SECONDS_OR_EMPTY: every target, jobs_max at a time, then the reports.
run_all() {
    local base=$1
    shift
    local t
    for t in "${targets[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
        run "$t" "$base/$t" "$@" &
    done
    wait
    local failed=0
    for t in "${targets[@]}"; do report "$t" "$base/$t" || failed=1; done
    return $failed
}

if [ "$mode" = smoke ]; then
    base=build-fuzz/smoke
    rm -rf "$base"
    echo "== fuzz smoke: ${#targets[@]} targets, 14 s each, $jobs_max at a time"
    start=$SECONDS
    if ! run_all "$base" -max_total_time=14; then
        echo "fuzz smoke: FAILED after $((SECONDS - start)) s" >&2
        exit 1
    fi
    echo "fuzz smoke: ${#targets[@]} targets clean in $((SECONDS - start)) s"
    exit 0
fi

# --long: the corpus each run grows is kept in build-fuzz/long/<target>/corpus, so a
# later run starts where this one ended.
base=build-fuzz/long
status=0
if [ "$report_only" = 1 ]; then
    kept=()
    for t in "${targets[@]}"; do [ -f "$base/$t/rc" ] && kept+=("$t"); done
    targets=("${kept[@]}")
    for t in "${targets[@]}"; do report "$t" "$base/$t" || status=1; done
else
    for t in "${targets[@]}"; do rm -rf "$base/$t/artifacts" "$base/$t/log" "$base/$t/rc"; done
    echo "== fuzz long: ${#targets[@]} targets, $runs executions each, $jobs_max at a time"
    run_all "$base" -runs="$runs" || status=1
fi

# Results: libFuzzer's final stats (-print_final_stats) and its last status line.
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
stat() { grep -E "^stat::$2:" "$1" | awk '{print $2}' | tail -1; }
# The last status line: DONE, or the last before an interrupt.
field() { grep -aE '^#[0-9]+[[:space:]].*cov: ' "$1" | tail -1 | grep -oE "$2: [0-9]+" | awk '{print $2}'; }
mkdir -p bench/results
{
    echo "{"
    echo "  \"tool\": \"libFuzzer (clang $(clang++ -dumpversion)), -fsanitize=fuzzer,address,undefined\","
    echo "  \"commit\": \"$commit\","
    echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
    echo "  \"runs_per_target\": $runs,"
    echo "  \"parallel_targets\": $jobs_max,"
    echo "  \"cores\": $(nproc),"
    echo "  \"targets\": {"
    n=0
    for t in "${targets[@]}"; do
        d=$base/$t
        n=$((n + 1))
        rc=$(cat "$d/rc")
        crashes=$(find "$d/artifacts" -type f | wc -l)
        # A failed run without an artifact is still a finding (e.g. a leak at exit).
        [ "$rc" = 0 ] || [ "$rc" = 72 ] || [ "$crashes" -gt 0 ] || crashes=1
        interrupted=false
        [ "$rc" != 72 ] || interrupted=true
        sep=","
        [ $n -lt ${#targets[@]} ] || sep=""
        printf '    "%s": {"executions": %s, "exec_per_sec": %s, "wall_seconds": %s, "crashes": %s, ' \
            "$t" "$(stat "$d/log" number_of_executed_units)" "$(stat "$d/log" average_exec_per_sec)" \
            "$(cat "$d/wall")" "$crashes"
        printf '"corpus_units": %s, "corpus_files_added": %s, "coverage_edges": %s, "features": %s, ' \
            "$(field "$d/log" corp)" "$(find "$d/corpus" -type f | wc -l)" "$(field "$d/log" cov)" \
            "$(field "$d/log" ft)"
        printf '"seeds": %s, "max_len": %s, "peak_rss_mb": %s, "interrupted": %s}%s\n' \
            "$(find "fuzz/corpus/$t" -type f 2>/dev/null | wc -l)" "${MAXLEN[$t]:-4096}" \
            "$(stat "$d/log" peak_rss_mb)" "$interrupted" "$sep"
    done
    echo "  }"
    echo "}"
} >bench/results/fuzz.json
echo "results: bench/results/fuzz.json"
exit $status
