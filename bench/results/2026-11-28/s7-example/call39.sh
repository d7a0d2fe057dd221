#!/usr/bin/env bash
# Call 39: racing.replayable on the GPU (its test), then examples/llama_decode.py --race at
# batch 8 over a copy of call 35's m = 8 sweep (not yet raced): the example's own step
# (patched, eager, in a CUDA graph) races each bucket's finalists and pins, then decodes.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
(cd python && timeout 60 python3 -m pytest -q tests/test_racing.py -k "replayable or cache_counters" 2>&1 | tail -2)
cp .gpu/s/e2e8r.db $OUT/ex.db
t0=$(date +%s)
timeout 300 python3 examples/llama_decode.py --config .gpu/s/llama3/config.json --registry $OUT/ex.db --batch 8 \
    --tokens 48 --race > $OUT/example.txt 2>&1
echo "example exit $? in $(( $(date +%s) - t0 )) s"
grep -v -i -E "warn|ran separately" $OUT/example.txt | tail -16 | cut -c1-200
build/aitune why gemm_nt --dtype bf16 --db $OUT/ex.db --bucket m=8,n=28672,k=4096 2>&1 | grep -i -E "pin|note|raced" | head -5
rm -f $OUT/ex.db*
