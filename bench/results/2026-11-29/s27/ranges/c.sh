#!/usr/bin/env bash
# Session 27, last call: issue 33's first row (bench/run ranges) with swapab's evict param (the weight's boxes
# evict-first in L2; s27/evict call 14: the decode kernel 2-4% faster at m = 16, 48, the mid-size kernel 1-8% at
# one tile of rows) in the search. Compare with this session's call 1 (s27/spans-call1: 14336 x 4096 geomean
# m <= 64 0.979, 65..256 0.932). Predicted: 14336 x 4096's m <= 64 geomean 0.99-1.01, the rest within noise.
# Run from the tree's root, carry ["build/aitune"], a limit of 420 s.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 370 bench/run --out $OUT/r --no-figures ranges > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
gzip $OUT/r/trace.txt 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
tail -8 $OUT/run.log
