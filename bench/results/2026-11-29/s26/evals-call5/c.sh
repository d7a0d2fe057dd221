#!/usr/bin/env bash
# Session 26: does a larger search close 14336 x 4096's mid-m gap? Call 2 of this session (s26/ranges) found part
# [128, 193) a config 5-12% slower than call 3 of session 25 had (same tree but the carry; search luck at 8
# candidates a template). Same spec as bench/run ranges (RANGE_EXACT, vendor time), one weight a sweep:
# A 14336x4096 at max_evals 8, B the same at 16, C 4096x4096 at 16. Predicted: B's 65..256 geomean 0.94-0.95
# (A about 0.93), C's m <= 64 geomean within 2% of call 2's 1.188. Run from the tree's root, carry ["build/aitune"].
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() {
    local name=$1 w=$2 ev=$3 t0=$(date +%s)
    RANGE_EXACT=1 timeout 250 bench/range_scan.sh $OUT/$name $w 1:256 $ev 400s time > $OUT/$name.log 2>&1
    echo "$name ($w, max_evals $ev): exit $? in $(( $(date +%s) - t0 )) s"
    sed -n 2p $OUT/$name/range_table.txt
    rm -f $OUT/$name/range.db-* $OUT/$name/range.db.lock; gzip -f $OUT/$name/range.db $OUT/$name/trace.txt 2>/dev/null
}
run A 14336x4096 8
run B 14336x4096 16
run C 4096x4096 16
tar czf $OUT/evals.tgz -C $OUT A B C A.log B.log C.log && rm -rf $OUT/A $OUT/B $OUT/C
