#!/usr/bin/env bash
# Call 27 (sixth session): where batch 8's step goes with the exact m = 8 winners (e2e8.db):
# each aitune GEMM's time in the step against its neighbour-timed sweep time; host time
# at the default 2000 calls.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 100 python3 bench/host_overhead.py --registry .gpu/e2e8.db > $OUT/host.txt 2>&1
echo "host exit $?"; grep -E "^\| (torch.mm|aitune.nn.Linear.forward|the module's runner|torch.empty_like|aitune_launch_cached) " $OUT/host.txt
timeout 400 python3 bench/llama_profile.py --registry .gpu/e2e8.db --batch 8 --steps 32 --top 12 \
   --variants compile,compile+patch > $OUT/prof8.txt 2>&1
echo "profile exit $?"
grep -v -i warn $OUT/prof8.txt | grep -E "^==|^ +[0-9]" | head -30
