#!/usr/bin/env bash
# Session 28: issue 33's first row (bench/run ranges) with swapab's spans and carries keeping the most slots that
# fit shared memory at their new bn (templates/lib/swapab.lua's fit_stages). In s27's call 15 14336 x 4096's part
# [216, 256) raced no span: its finalists at m = 224 had 5 slots, their spans at bn 256 were refused (246880
# bytes), and wgmma 128 x 128 held m = 216..255 at 0.89-0.94x cuBLASLt, where one tile of rows at m's width runs
# 1.00-1.16x (s26 call 6, s28 call 1). Predicted: 14336 x 4096's m = 216..255 at 0.95-1.0x, its worst 0.90-0.92
# (m = 129..192 or 256), its 65..256 geomean 0.95-0.96 (0.941); the other weights within noise.
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
