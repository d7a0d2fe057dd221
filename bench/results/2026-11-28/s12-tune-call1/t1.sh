#!/usr/bin/env bash
# Call 1 (twelfth session, 2x H200): the Llama-3-8B registry, tuned on the card as the README says
# (python -m aitune tune CONFIG --batch 1:32 --prompt 128:2048 --exact-batch 1,8,32), over both GPUs,
# with a budget that fits one call. The registry stays at /tmp/llama.db for call 2 (e2e) and comes back gzipped.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
lscpu | grep "Model name"; nproc
t0=$(date +%s)
rm -f /tmp/llama.db*
timeout 545 python3 -m aitune tune .gpu/llama3/config.json --batch 1:32 --prompt 128:2048 --exact-batch 1,8,32 \
    --gpus 2 --budget 470s --db /tmp/llama.db > $OUT/tune.log 2>&1
echo "tune exit $? at $(( $(date +%s) - t0 )) s"
grep -v "^sweep: bucket\|ETA" $OUT/tune.log | tail -25 | cut -c1-250
build/aitune show --db /tmp/llama.db 2>/dev/null | head -150 > $OUT/show.txt
ls -la /tmp/llama.db*
gzip -c /tmp/llama.db > $OUT/llama.db.gz; ls -la $OUT/llama.db.gz
gzip -f $OUT/tune.log
