#!/usr/bin/env bash
# Call 29: batch 8 step timeline (each kernel's share of the wall), compile and compile+patch, e2e8.db.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
timeout 400 python3 bench/llama_profile.py --registry .gpu/e2e8.db --batch 8 --steps 32 --top 14 --timeline \
   --variants compile+patch,compile > $OUT/tl8.txt 2>&1
echo "profile exit $?"
grep -v -i warn $OUT/tl8.txt | grep -E "^==|^  " | grep -v "^  *[0-9.]* us *[0-9]* x  [a-z]" | head -60
