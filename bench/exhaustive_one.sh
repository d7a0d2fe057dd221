#!/usr/bin/env bash
# Tuning time on the GPU, exhaustive against the default: one bucket of
# specs/gemm.yaml (bench/gemm/exhaustive_one.yaml, bf16 nn 4096^3) swept
# exhaustively, then with the spec's default strategy (model, 64 configs per
# template), each into a fresh registry; prints wall times, candidates and
# the winners' times. Logs to OUTDIR.
#   bench/exhaustive_one.sh OUTDIR [--budget D]
set -u
out=${1:?usage: bench/exhaustive_one.sh OUTDIR [--budget D]}
shift
mkdir -p "$out"
w=$(mktemp -d /tmp/aitune-ex.XXXX)
sed 's/^search: exhaustive$/search: model\nmax_evals: 64/' bench/gemm/exhaustive_one.yaml > "$w/default.yaml"
for mode in default exhaustive; do
    spec=bench/gemm/exhaustive_one.yaml
    [ $mode = default ] && spec=$w/default.yaml
    t0=$(date +%s%N)
    build/aitune sweep "$spec" --db "$w/$mode.db" --quiet "$@" > "$out/$mode-sweep.txt" 2> "$out/$mode-sweep.err"
    rc=$?
    t1=$(date +%s%N)
    n=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from measurements').fetchone()[0])" "$w/$mode.db")
    win=$(build/aitune show --db "$w/$mode.db" 2>/dev/null | grep -m1 gemm_nn)
    printf '%-10s exit %d  %7.1f s  %5d candidates measured  winner: %s\n' $mode $rc "$(( (t1 - t0) / 1000000000 )).$(( (t1 - t0) / 100000000 % 10 ))" "$n" "$win" |
        tee -a "$out/exhaustive-one.txt"
done
