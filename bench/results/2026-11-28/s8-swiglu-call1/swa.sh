#!/usr/bin/env bash
# Call A (8th session): gemm_swiglu on the GPU: sanitizer, sweep, peer.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
SANITIZE_SPEC=.gpu/s/sw_san.yaml timeout 170 tests/gpu/sanitize.sh $OUT/san 2>&1 | tail -4
echo "sanitize done $(( $(date +%s) - t0 )) s"
timeout 240 build/aitune sweep .gpu/s/sw.yaml --db $OUT/sw.db --quiet > $OUT/sweep.txt 2> $OUT/sweep.err
echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
tail -25 $OUT/sweep.txt | cut -c1-220
grep -i "wrong\|fault\|error" $OUT/sweep.err | head -5
timeout 150 python3 bench/swiglu_prefill.py --registry $OUT/sw.db --tokens 2048,512 2> $OUT/peer.err
echo "peer exit $? at $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/peer.err | tail -5 | cut -c1-300
rm -f $OUT/sw.db-*
