#!/usr/bin/env bash
# Call 38: the vocab rows suite after the hold/split budget fix (bench/rows_vocab.sh, 100 s),
# then batch 8 again on the raced registry (compile vs compile+patch) on this machine.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$(date +%s)
timeout 330 bash bench/rows_vocab.sh $OUT/rows 100s > $OUT/rows.txt 2>&1
echo "rows exit $? in $(( $(date +%s) - t0 )) s"
tail -32 $OUT/rows.txt | cut -c1-180
rm -f $OUT/rows/*.db*
t0=$(date +%s)
timeout 200 python3 bench/llama_e2e.py --registry .gpu/s/race18.db --batches 8 --steps 32 --prefill 0 --host-calls 2000 \
    --variants compile,compile+patch --out $OUT > $OUT/e2e.txt 2>&1
echo "e2e exit $? in $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/e2e.txt | sed -n '/^llama_e2e on/,$p' | head -7
cd $OUT && tar czf rows.tgz rows && rm -rf rows
