#!/usr/bin/env bash
# Call 22 (fifth session): host time with the C hot path (_aitune_hot) against the Python
# runner, then where batch 8's decode step goes (compile vs compile+patch, static shapes).
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__)"
for h in 1 0 1; do
  AITUNE_HOT=$h timeout 120 python3 bench/host_overhead.py --registry .gpu/e2e.db > $OUT/host_$h.txt 2>&1
  echo "hot=$h exit $?"; grep -E "^\| (torch.mm|aitune.nn.Linear.forward|the module's runner|torch.ops.aitune.linear) " $OUT/host_$h.txt; grep "^Linear.forward" $OUT/host_$h.txt
done
timeout 400 python3 bench/llama_profile.py --registry .gpu/e2e.db --batch 8 --steps 32 --top 16 \
   --variants compile,compile+patch > $OUT/prof8.txt 2>&1
echo "profile exit $?"
grep -v -i warn $OUT/prof8.txt | grep -E "^==|^ +[0-9]" | head -40
