#!/usr/bin/env bash
# Call 30: do swapab's m = 8 winners keep their sweep times inside the batch-8 step, where gemv's lose 12-54%?
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
timeout 150 build/aitune sweep .gpu/x/sw4.yaml --db $OUT/sw4.db --vendor off --quiet > $OUT/sw4.txt 2> $OUT/sw4.err
echo "sweep exit $?"; grep -E "^gemm_nt|^sweep:" $OUT/sw4.txt $OUT/sw4.err | cut -c1-230
python3 .gpu/x/swapwin.py .gpu/e2e8.db $OUT/sw4.db $OUT/mix.db
timeout 300 python3 bench/llama_profile.py --registry $OUT/mix.db --batch 8 --steps 32 --top 8 --timeline \
   --variants compile+patch > $OUT/tl8.txt 2>&1
echo "profile exit $?"
grep -v -i warn $OUT/tl8.txt | grep -E "^==|^  " | grep -v "^  *[0-9.]* us *[0-9]* x  [a-z]" | head -30
rm -f $OUT/mix.db
