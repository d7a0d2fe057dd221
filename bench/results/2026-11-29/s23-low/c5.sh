#!/usr/bin/env bash
# Session 23, call 5: what could serve prefill's low end (m 256..450, the range sweeps' worst sizes: 4096^2 at 317
# 0.716x, 14336x4096 at 256 0.819x and 378 0.764x), an exhaustive sweep of a narrowed wgmma space (bm 64/128,
# stream-K 0/1, swapped and not) at 4096^2 m 257/317/378/439 and 14336x4096 m 256/317/378, cuBLASLt raced at each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=bench/results/2026-11-29/s23-low
python3 bench/narrow.py $OUT/h wgmma $P/w.lua wgmma_swap $P/sw.lua wgmma_swap $P/swid.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 260 build/aitune sweep $P/low.yaml --db $OUT/low.db --vendor time --budget 240s --quiet > $OUT/low.txt 2> $OUT/low.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/low.txt
python3 $P/table.py $OUT/low.db | tee $OUT/low_table.txt
gzip $OUT/low.db; rm -rf $OUT/h $OUT/low.db.lock
