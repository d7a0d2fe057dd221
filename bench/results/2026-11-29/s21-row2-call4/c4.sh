#!/usr/bin/env bash
# Session 21, call 4: bench/run prefill-range -- 4096x4096 (issue 33's second row, one weight, the whole 300 s sweep; trace and time split kept)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 585 bench/run --out $OUT/pr --no-figures prefill-range -- 4096x4096 > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $OUT/pr/range.db > $OUT/pr.db.gz 2>/dev/null; rm -f $OUT/pr/range.db $OUT/pr/range.db-wal $OUT/pr/range.db-shm $OUT/pr/range.db.lock
tar czf $OUT/pr.tgz -C $OUT pr && rm -rf $OUT/pr
tail -12 $OUT/run.log
