#!/usr/bin/env bash
# Call 3: the batch-1 step's kernels, compile+patch without and with aitune's decode attention.
set -u
export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so PYTHONUNBUFFERED=1
gunzip -c .gpu/s13/l3.db.gz > /tmp/l3.db
timeout 400 python3 .gpu/s13/prof.py /tmp/l3.db > $OUT/prof.txt 2>&1; echo "prof exit $?"
grep -v -i warn $OUT/prof.txt | tail -64
