#!/usr/bin/env bash
# Session 28, call 5: issue 33's first row at 14336 x 4096 alone (bench/run ranges -- 14336x4096), each searched
# part's winner now polished over the part (sweep_part.c's polish_ring: its neighbours one param step away raced at
# the part's sizes, then the moves that paid all at once). Calls 2 and 4 of this session: 65..256 geomean 0.946 and
# 0.934, m = 129..192 at 0.88-0.93x; call 3 (s28/kbox): swapab's best there 0.99-1.00x (5 slots, evict 1,
# l2pre 2), each a move or two from the parts' winners. Predicted: m = 129..192 at 0.94-0.98x, the 65..256 geomean
# 0.95-0.97. Run from the tree's root, carry ["build/aitune"], a limit of 300 s.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 280 bench/run --out $OUT/r --no-figures ranges -- 14336x4096 > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
gzip $OUT/r/trace.txt 2>/dev/null
grep -E "^polish" $OUT/r/sweep.txt | cut -c1-240 | head -20
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
tail -4 $OUT/run.log
