#!/usr/bin/env bash
# Session 20, call 2: bench/run prefill-range (issue 33's second row, both weights, 300 s sweep, scan at step 61) with wgmma_swap's run-time widths in the space
set -u
t0=$(date +%s)
timeout 585 bench/run --out $OUT/pr --no-figures prefill-range > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $OUT/pr/range.db > $OUT/pr.db.gz 2>/dev/null; rm -f $OUT/pr/range.db $OUT/pr/range.db-wal $OUT/pr/range.db-shm $OUT/pr/range.db.lock
tar czf $OUT/pr.tgz -C $OUT pr && rm -rf $OUT/pr
tail -12 $OUT/run.log
