#!/usr/bin/env bash
# Session 26, last call: swapab's widths in steps of 8 or 16 chosen at run time (wstep) and a part's finalists
# raced with their spans (tmpl_span: one tile holding the part's upper edge, widths down to its lower edge).
# compute-sanitizer first over wstep 8 and 16 (first and second mid-size kernels; n = 4100,
# m = 193 and 229), then issue 33's first row (bench/run ranges), to compare with this session's call 2
# (s26/ranges: 14336 x 4096 geomean 65..256 0.928, worst 0.850). Predicted: 14336 x 4096's 65..256 geomean
# 0.95-0.98, the m = 129..255 parts at 0.93-1.02x. Run from the tree's root, carry ["build/aitune"], a limit of
# 600 s (call 7 of session 26 ran it with 354 s left: the sanitizer printed no verdict within its 60 s, the
# sweep took 276 s and the scan was cut).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s26/spans
python3 bench/narrow.py $OUT/hs swapab $N/san.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/hs SANITIZE_SPEC=$N/san.yaml SANITIZE_ARGS="--vendor off" timeout 120 tests/gpu/sanitize.sh $OUT/san > $OUT/san.log 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/san.log; rm -rf $OUT/hs
t0=$(date +%s)
timeout 450 bench/run --out $OUT/r --no-figures ranges > $OUT/run.log 2>&1
echo "bench/run exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $OUT/r/range.db > $OUT/r.db.gz 2>/dev/null; rm -f $OUT/r/range.db $OUT/r/range.db-wal $OUT/r/range.db-shm $OUT/r/range.db.lock
tar czf $OUT/r.tgz -C $OUT r san san.log && rm -rf $OUT/r $OUT/san
tail -8 $OUT/run.log
