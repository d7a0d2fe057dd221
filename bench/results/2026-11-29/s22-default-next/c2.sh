#!/usr/bin/env bash
# Prepared in session 22, not run (its device time was spent): the swapped family's default with 192-row tiles (consumers split by columns) against the old one, default only at 23 shapes where the cost model changes it, x cuBLASLt.
# Set up, from the tree's root: mkdir -p .gpu/s22/old && git archive HEAD templates search | tar x -C .gpu/s22/old (the
# tree as it is), then git apply bench/results/2026-11-29/s22-default-next/default192.patch (the default's tiles with
# 192 rows; templates are read at run time, nothing to rebuild).
# def_old.tsv / def_new.tsv: `build/tests/kernel_sample list -n 0 def.yaml | cut -f3,5` in each tree.
set -u
D=bench/results/2026-11-29/s22-default-next
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
AITUNE_HOME=.gpu/s22/old timeout 70 build/aitune sweep $D/def.yaml --db $OUT/old.db --vendor time --quiet > $OUT/old.txt 2> $OUT/old.err
echo "old exit $? in $(( $(date +%s) - t0 )) s"; t0=$(date +%s)
timeout 70 build/aitune sweep $D/def.yaml --db $OUT/new.db --vendor time --quiet > $OUT/new.txt 2> $OUT/new.err
echo "new exit $? in $(( $(date +%s) - t0 )) s"
tail -2 $OUT/new.err
python3 bench/results/2026-11-29/s21-default-call6/compare.py $OUT/old.db $OUT/new.db $D/def_old.tsv $D/def_new.tsv > $OUT/deftable.txt
tar czf $OUT/res.tgz -C $OUT old.db new.db old.err new.err && rm -f $OUT/*.db $OUT/*.db.lock
cat $OUT/deftable.txt
