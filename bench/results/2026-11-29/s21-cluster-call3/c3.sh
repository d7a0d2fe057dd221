#!/usr/bin/env bash
# Session 21, call 3: the swapped kernel's clusters (1x2: a pair shares the weight's tile by multicast, as cuBLASLt's 1x2 coopB kernel does; 2x1: a pair shares A's) against one CTA, at row 2's sizes, x cuBLASLt
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 bench/narrow.py $OUT/nk wgmma .gpu/s21/cl.lua wgmma_swap .gpu/s21/kw.lua wgmma_swap .gpu/s21/kb.lua wgmma_swap .gpu/s21/ed.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/nk timeout 300 build/aitune sweep .gpu/s21/cl.yaml --db $OUT/cl.db --vendor time --quiet > $OUT/cl.txt 2> $OUT/cl.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/cl.err
python3 .gpu/s21/table.py $OUT/cl.db > $OUT/cltable.txt
gzip $OUT/cl.db; rm -rf $OUT/nk $OUT/cl.db.lock
head -32 $OUT/cltable.txt | cut -c1-150
