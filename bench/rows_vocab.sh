#!/usr/bin/env bash
# bench/rows_vocab.sh OUTDIR [BUDGET]: the vocab suite's measurement (one
# device call, about 5 minutes on an H100 with build/ carried; the GPU
# machine builds nothing): sweep bench/rows_vocab.yaml (softmax and rmsnorm,
# 4096 rows, every width 32000..256000 as a range, BUDGET default 200s:
# with 100 s hold and split were cut in 8 buckets on an H200, and rmsnorm
# at 128256 ran 3.4% slower than its best config; with 200 s they finish
# in 127 s),
# scan the widths of bench/rows_vocab_scan.yaml (five vocabularies and the
# odd widths beside them, each answer verified there), sweep
# bench/rows_vocab_odd.yaml (every row op and dtype at odd widths: each
# candidate verified against the reference with NaN-poisoned outputs),
# sweep bench/rows_vocab_rpb.yaml (rmsnorm's tma family with and without
# rows per block), and compare each scanned width with PyTorch eager
# (bench/rows_vocab.py). The table last: OUTDIR/rows_table.txt. Exit 1 if
# a verified candidate was wrong or a step failed.
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
rc=0
exec 3>&1
step() {   # NAME CMD... (redirected): run CMD, say its exit status on fd 3, remember a failure
    local name=$1 s
    shift
    "$@"
    s=$?
    echo "$name exit $s" >&3
    [ $s = 0 ] || rc=1
}
step sweep build/aitune sweep bench/rows_vocab.yaml --db "$out/rows.db" --budget "${2:-200s}" --quiet \
    > "$out/rows_sweep.txt" 2> "$out/rows_sweep.err"
grep -E '^(sweep|hold):' "$out/rows_sweep.err"
step scan build/aitune scan bench/rows_vocab_scan.yaml --db "$out/rows.db" --quiet > "$out/rows_scan.txt" 2>&1
grep -E '^scan' "$out/rows_scan.txt"
step "verification sweep" build/aitune sweep bench/rows_vocab_odd.yaml --db "$out/odd.db" --quiet \
    > "$out/odd_sweep.txt" 2> "$out/odd_sweep.err"
grep -E '^sweep:' "$out/odd_sweep.err"
step "rpb sweep" build/aitune sweep bench/rows_vocab_rpb.yaml --db "$out/rpb.db" --quiet \
    > "$out/rpb_sweep.txt" 2> "$out/rpb_sweep.err"
grep -E '^sweep:' "$out/rpb_sweep.err"
step report python3 bench/rows_vocab.py "$out/rows.db" --verify "$out/odd.db" --rpb "$out/rpb.db" > "$out/rows_report.txt"
# the report's last table is the suite's figures
cat "$out/rows_report.txt"
awk '/^\| op \| rows x cols/ { t = "" } { t = t $0 "\n" } END { printf "%s", t }' "$out/rows_report.txt" |
    grep '^|' > "$out/rows_table.txt"
exit $rc
