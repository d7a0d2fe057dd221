#!/usr/bin/env bash
# Session 28, call 6: issue 33's first row (bench/run ranges), every weight, with each searched part's winner
# polished over the part (sweep_part.c's polish_ring), fit_stages and the 2% tie of worst losses. Call 5 (14336 x
# 4096 alone): 65..256 geomean 0.955 (0.934-0.946 in calls 2 and 4), m = 129..215 at 0.92-1.00x, worst 0.878 at
# m = 241 (wgmma holding [216, 256)). Predicted: 14336 x 4096 within 0.01 of call 5; the other weights' geomeans
# within noise or up; the sweep 60-120 s longer than call 2's 298 s wall (the 400 s budget may cut hold in a bucket).
# Run from the tree's root, carry ["build/aitune"], a limit of 600 s.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 540 bench/run --out $OUT/r --no-figures ranges > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
gzip $OUT/r/trace.txt 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
tail -8 $OUT/run.log
