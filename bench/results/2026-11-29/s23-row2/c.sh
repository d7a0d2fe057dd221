#!/usr/bin/env bash
# Session 23, calls 3 and 4: bench/run prefill-range -- WEIGHT (issue 33's second row, one weight a call, the whole
# 300 s sweep), after uniform descriptors, lean swapped stores and PDL in the wgmma kernel. bash c.sh 4096x4096
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 585 bench/run --out $OUT/pr --no-figures prefill-range -- $1 > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $OUT/pr/range.db > $OUT/pr.db.gz 2>/dev/null; rm -f $OUT/pr/range.db $OUT/pr/range.db-wal $OUT/pr/range.db-shm $OUT/pr/range.db.lock
tar czf $OUT/pr.tgz -C $OUT pr && rm -rf $OUT/pr
tail -12 $OUT/run.log
