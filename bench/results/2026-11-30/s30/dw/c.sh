#!/usr/bin/env bash
# Session 30: the decode kernel's wgmma width chosen at run time (m rounded up to 8, among bn down to bn/2).
# 1. compute-sanitizer memcheck over 90 decode configs (bn 8..64, csplit 1/2/4, bm 64/128) at ragged m, n and k,
#    GEMM and the gated product: every candidate verified against the reference, no sanitizer error.
# 2. s30/dec's probe again (4096^2, m = 17..63): predicted bn 64 within 1% of bn 40 at m = 33 and 40 (it ran 3% slower
#    with one width), so the best of each bn at m flat across the bn that hold m.
# 3. issue 33's first row (bench/run ranges): predicted 4096^2's m <= 64 geomean 1.240 -> ~1.25 (m = 33..63 0.5-3% faster).
# Run from the tree's root, carry ["build/aitune"]; about 7 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s30/dw
python3 bench/narrow.py $OUT/hs swapab $N/san.lua > /dev/null || exit 1
T0=$(date +%s); t0=$T0
AITUNE_HOME=$OUT/hs timeout 120 compute-sanitizer --tool memcheck --print-limit 20 build/aitune sweep $N/san.yaml \
  --db $OUT/s.db --timeout 120s --quiet --vendor off > $OUT/san.txt 2>&1
rc=$?
errs=$(grep -o "ERROR SUMMARY: [0-9]*" $OUT/san.txt | awk '{ s += $3 } END { print s + 0 }')
echo "sanitizer: exit $rc, $errs errors, $(( $(date +%s) - t0 )) s"
python3 tests/gpu/verdict.py $OUT/s.db "$rc" "compute-sanitizer memcheck" --sanitizer-errors "$errs" | tail -2
python3 -c "
import sqlite3, sys; db = sqlite3.connect(sys.argv[1])
print('sanitize statuses:', db.execute('select status, count(*) from measurements group by status').fetchall())" $OUT/s.db
rm -rf $OUT/hs $OUT/s.db*
mkdir -p $OUT/dec && OUT=$OUT/dec timeout 90 bash bench/results/2026-11-30/s30/dec/c.sh > $OUT/dec.log 2>&1
tail -9 $OUT/dec/table.txt
left=$(( 580 - ($(date +%s) - T0) )); t0=$(date +%s)
timeout $left bench/run --out $OUT/r --no-figures ranges > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s (limit $left)"
rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
gzip $OUT/r/trace.txt 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
tail -8 $OUT/run.log
tar czf $OUT/dec.tgz -C $OUT dec san.txt && rm -rf $OUT/dec $OUT/san.txt
