#!/usr/bin/env bash
# Prepared in session 22, not run: the swapped family's default with 192-row tiles (default192.patch: consumers
# split by columns) against the tree's, default only at 23 sizes where the cost model changes it, x cuBLASLt.
# Needs no set-up: run from the tree's root. def_old.tsv / def_new.tsv are the two defaults at def.yaml's sizes
# (`build/tests/kernel_sample list -n 0 def.yaml | cut -f3,5` in each tree), which compare.py picks out.
set -u
D=bench/results/2026-11-29/s22-default-next
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in old new; do mkdir -p $OUT/h$v && cp -r templates search $OUT/h$v/ || exit 1; done
(cd $OUT/hnew && git apply "$OLDPWD/$D/default192.patch") || exit 1
for v in old new; do
  t0=$(date +%s)
  AITUNE_HOME=$OUT/h$v timeout 70 build/aitune sweep $D/def.yaml --db $OUT/$v.db --vendor time --quiet > $OUT/$v.txt 2> $OUT/$v.err
  echo "$v exit $? in $(( $(date +%s) - t0 )) s"
done
tail -2 $OUT/new.err
python3 bench/results/2026-11-29/s21-default-call6/compare.py $OUT/old.db $OUT/new.db $D/def_old.tsv $D/def_new.tsv > $OUT/deftable.txt
tar czf $OUT/res.tgz -C $OUT old.db new.db old.err new.err && rm -rf $OUT/*.db $OUT/*.db.lock $OUT/hold $OUT/hnew
cat $OUT/deftable.txt
