#!/usr/bin/env bash
# Call B (8th session): gemm_swiglu with swapab's decode kernel: sanitizer, sweep into a copy
# of race18.db, kernel-level peers at 2048, 8 and 1.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
SANITIZE_SPEC=.gpu/s/sw_san2.yaml SANITIZE_ARGS="--vendor off" timeout 130 tests/gpu/sanitize.sh $OUT/san 2>&1 | tail -3
grep -c "=========" $OUT/san/sanitize.txt; grep "=========" $OUT/san/sanitize.txt | grep -v "COMPUTE-SANITIZER\|ERROR SUMMARY: 0" | head -5
grep "gemm_swiglu" $OUT/san/sanitize.txt | cut -c1-200
echo "sanitize done $(( $(date +%s) - t0 )) s"
cp .gpu/s/race18.db $OUT/e2e.db
timeout 220 build/aitune sweep .gpu/s/sw2.yaml --db $OUT/e2e.db --quiet > $OUT/sweep.txt 2> $OUT/sweep.err
echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
grep swiglu $OUT/sweep.txt | cut -c1-230
grep -i "wrong\|fault\|error" $OUT/sweep.err | head -5
timeout 150 python3 bench/swiglu_prefill.py --registry $OUT/e2e.db --tokens 2048,8,1 2> $OUT/peer.err
echo "peer exit $? at $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/peer.err | tail -5 | cut -c1-300
rm -f $OUT/e2e.db-*
