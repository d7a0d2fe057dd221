#!/usr/bin/env bash
# Tuning time of a whole spec on the GPU, exhaustive against the default,
# bucket by bucket, so that the exhaustive half fits into device calls of
# 10 minutes: each named task of SPEC (1-based, spec order) is swept alone
# with `search: exhaustive` into a fresh registry, then with the spec's own
# strategy into another; prints each sweep's wall time, candidates measured
# and winner, one line each (OUTDIR/exhaustive-spec.txt). A bucket's sweep
# in a fresh registry compiles everything it needs itself, so the sum over
# buckets is an upper bound on one sweep of the whole spec. Tasks left out
# run in another call; add the lines up.
#   bench/exhaustive_spec.sh OUTDIR SPEC TASK... [-- SWEEP-ARGS]
#   e.g. bench/exhaustive_spec.sh $OUT specs/gemm.yaml 1      (8192^3 alone)
set -u
out=${1:?usage: bench/exhaustive_spec.sh OUTDIR SPEC TASK... [-- SWEEP-ARGS]}
spec=${2:?usage: bench/exhaustive_spec.sh OUTDIR SPEC TASK... [-- SWEEP-ARGS]}
shift 2
tasks=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do tasks+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
w=$(mktemp -d /tmp/aitune-exs.XXXX)
for i in "${tasks[@]}"; do
    # The spec's header and its i-th task (a task starts at "  - op:").
    awk -v want="$i" '/^  - op:/ { n++ } n == 0 || n == want' "$spec" > "$w/default-$i.yaml"
    grep -q '^  - op:' "$w/default-$i.yaml" || { echo "exhaustive_spec: $spec has no task $i" >&2; exit 2; }
    sed -e 's/^search: .*/search: exhaustive/' -e '/^max_evals:/d' "$w/default-$i.yaml" > "$w/exhaustive-$i.yaml"
    for mode in exhaustive default; do
        db=$w/$mode-$i.db
        t0=$(date +%s%N)
        build/aitune sweep "$w/$mode-$i.yaml" --db "$db" --quiet "$@" > "$out/$mode-$i-sweep.txt" 2> "$out/$mode-$i-sweep.err"
        rc=$?
        t1=$(date +%s%N)
        n=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from measurements').fetchone()[0])" "$db")
        win=$(build/aitune show --db "$db" 2>/dev/null | sed -n 2p)
        printf 'task %s %-10s exit %d  %7.1f s  %5d candidates measured  winner: %s\n' "$i" $mode $rc \
            "$(( (t1 - t0) / 1000000000 )).$(( (t1 - t0) / 100000000 % 10 ))" "$n" "$win" | tee -a "$out/exhaustive-spec.txt"
        rm -f "$db"
    done
done
