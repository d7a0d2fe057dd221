#!/usr/bin/env bash
# Session 23, call 8: 64 x 192 tiles (one consumer) among the wgmma default's wave tiles (cost 0.50 of the pair's
# wave: call 6-7 measured a wave of them at 4096^2, m 317, in 20.45 us against 40.9 for 128 x 256). The old and the
# new default's configs (def_old.tsv, def_new.tsv: kernel_sample list) are both in the narrowed space d.lua, timed
# at the 6 sizes of row 2 where the default changes and 3 where it does not; cuBLASLt raced at each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=bench/results/2026-11-29/s23-def
python3 bench/narrow.py $OUT/h wgmma $P/d.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 100 build/aitune sweep $P/d.yaml --db $OUT/d.db --vendor time --budget 90s --quiet > $OUT/d.txt 2> $OUT/d.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"
python3 $P/table.py $OUT/d.db $P/def_old.tsv $P/def_new.tsv | tee $OUT/d_table.txt
gzip $OUT/d.db; rm -rf $OUT/h $OUT/d.db.lock
