#!/usr/bin/env bash
# Call 2 (thirteenth session, 2x H200): attn_decode swept into the Llama registry, checked against
# transformers' sdpa path and timed (CUDA graphs), memcheck, then issue 32's decode table with it.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gunzip -c .gpu/llama2.db.gz > /tmp/l.db
t0=$(date +%s)
CUDA_VISIBLE_DEVICES=0 build/aitune sweep .gpu/s13/attn.yaml --db /tmp/l.db > $OUT/sweep.txt 2>&1; echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
tail -12 $OUT/sweep.txt
build/aitune show --db /tmp/l.db 2>/dev/null | grep -i attn | head
CUDA_VISIBLE_DEVICES=1 timeout 200 compute-sanitizer --tool memcheck python3 .gpu/s13/attn_bench.py /tmp/l.db small > $OUT/memcheck.txt 2>&1 &
CUDA_VISIBLE_DEVICES=0 timeout 120 python3 .gpu/s13/attn_bench.py /tmp/l.db > $OUT/bench.txt 2>&1; echo "bench exit $?"
grep -v -i warn $OUT/bench.txt | tail -12
wait
echo "memcheck:"; grep -E "ERROR SUMMARY|max err|Invalid" $OUT/memcheck.txt | head
t1=$(date +%s)
timeout 330 python3 bench/llama_e2e.py --registry /tmp/l.db --gpus 2 --prefill 0 --out $OUT/e2e > $OUT/e2e.txt 2>&1
echo "e2e exit $? at $(( $(date +%s) - t1 )) s"
grep -v "^\[gpu" $OUT/e2e.txt | grep -v -i warn | tail -30
gzip -c /tmp/l.db > $OUT/l3.db.gz
