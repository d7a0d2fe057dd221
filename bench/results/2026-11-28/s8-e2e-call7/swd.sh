#!/usr/bin/env bash
# Call D (8th session): batch-1 decode as tune now writes it (no gemm_swiglu at m = 1: tuning.SWIGLU_MIN_M),
# registry e2e_sw2.db = e2e_sw.db without its m = 1 gemm_swiglu winner; host time over 2000 calls.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 280 python3 bench/llama_e2e.py --registry .gpu/s/e2e_sw2.db --batches 1 --steps 32 --prefill 0 --host-calls 2000 \
    --variants compile,compile+patch --out $OUT > $OUT/e2e.txt 2> $OUT/e2e.err
echo "e2e exit $? at $(( $(date +%s) - t0 )) s"
grep "^| 1 \|batch 1 decode\|host per call\|check" $OUT/e2e.txt
grep -v -i warn $OUT/e2e.err | tail -3 | cut -c1-300
