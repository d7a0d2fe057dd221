#!/usr/bin/env bash
# Session 28, call 4: issue 33's first row (bench/run ranges) with fit_stages (call 2), worst losses within 2%
# tying and the smaller mean loss winning (probe_winner), and each part's search ending with a local search from
# its fastest config (split_polish 16; search/local.lua's ring and combination). Call 2: 14336 x 4096 geomean
# <= 64 0.999, 65..256 0.946, worst 0.878 (m = 254, wgmma holding [225, 256)); call 3 (s28/kbox): swapab's best
# at m = 136, 160, 192 0.99-1.00x cuBLASLt where the parts' winners ran 0.92. Predicted: 14336 x 4096's 65..256
# geomean 0.96-0.98, worst 0.90-0.93; the sweep 60-120 s longer; the other weights within noise or up.
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
