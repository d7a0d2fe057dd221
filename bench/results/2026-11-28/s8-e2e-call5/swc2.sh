#!/usr/bin/env bash
# Call C2 (8th session): Llama-3-8B 2048-token prefill and host time, torch.compile vs + patch (fused MLPs) vs + patch(swiglu=False),
# registry = race18.db + call B's gemm_swiglu winners (m = 2048, 8, 1).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 540 python3 bench/llama_e2e.py --registry .gpu/s/e2e_sw.db --batches "" --prefill 2048 --host-calls 2000 \
    --variants compile,compile+patch,compile+patch-nofuse --out $OUT > $OUT/e2e.txt 2> $OUT/e2e.err
echo "e2e exit $? at $(( $(date +%s) - t0 )) s"
grep -v "^|" $OUT/e2e.txt | tail -20; grep "prefill\|host" $OUT/e2e.txt
grep -v -i warn $OUT/e2e.err | tail -4 | cut -c1-300
