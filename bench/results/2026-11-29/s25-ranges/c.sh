#!/usr/bin/env bash
# Session 25: bench/run ranges (issue 33's first row), first time since the nineteenth session (after PDL, the tail
# maps, the share cap and the wave-step probes). Run from the tree's root with carry ["build/aitune"].
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 585 bench/run --out $OUT/r --no-figures ranges > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $OUT/r/range.db > $OUT/r.db.gz 2>/dev/null; rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
tail -14 $OUT/run.log
