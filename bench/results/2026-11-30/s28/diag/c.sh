#!/usr/bin/env bash
# Session 28, call 7: call 5 again (14336 x 4096 alone, bench/run ranges -- 14336x4096, each searched part's
# winner polished over the part), the trace now giving every slot's time at every probe: how far two runs of one
# tree differ (call 5: 65..256 geomean 0.955, worst 0.878; call 6, all four weights: 0.971, 0.889), and why
# wgmma 128 x 128 holds [216, 256) over swapab's span (its times at 216..255 against the span's). Predicted: the
# geomean within 0.015 of call 5's; the span within 3% of wgmma at m = 255 and 5-10% faster inside the part.
# Run from the tree's root, carry ["build/aitune"], a limit of 195 s.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 175 bench/run --out $OUT/r --no-figures ranges -- 14336x4096 > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
gzip $OUT/r/trace.txt 2>/dev/null
grep -E "^polish" $OUT/r/sweep.txt | cut -c1-240 | head -20
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
tail -4 $OUT/run.log
