#!/usr/bin/env bash
# Session 29, the last call: issue 33's first row (bench/run ranges) at 4096^2 and 1024 x 4096, with the decode kernel's
# default loading the weight evict-first and prefetching 4 boxes into L2 (s29/dec: 5.5% faster at 4096^2, m =
# 16..63). Call 4 of this session (same tree before that change): m <= 64 geomeans 1.386 / 1.200 / 1.093 / 1.004
# (1024 x 4096, 4096^2, 4096 x 14336, 14336 x 4096). Predicted: 4096^2's m <= 64 geomean 1.24-1.27 (its m = 16..63
# at 10.4-11.2 us), 1024 x 4096's (whose decode winners had neither hint at m = 4..15) within noise or up;
# 65..256 unchanged within noise. Two of the four weights, with the suite's 100 s of sweep budget a weight:
# the session's device time left (421 s) does not hold the whole row (363 s of command in call 4).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 330 bench/run --out $OUT/r --no-figures ranges -- 4096x4096,1024x4096 1:256 8 200s > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
gzip $OUT/r/trace.txt 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
tail -8 $OUT/run.log
