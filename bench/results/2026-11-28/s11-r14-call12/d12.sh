#!/usr/bin/env bash
# Call 12: the ranges suite's 14336 x 4096 weight alone (its quarter of the 400 s budget), after swapab's decode
# default took two boxes of k a slot.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
RANGE_EXACT=1 timeout 170 bench/range_scan.sh $OUT/r 14336x4096 1:256 8 100s off > $OUT/r.log 2>&1
echo "exit $? at $(( $(date +%s) - t0 )) s"; tail -4 $OUT/r.log
rm -f $OUT/r/range.db*
