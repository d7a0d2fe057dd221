#!/usr/bin/env bash
# Prepared in session 22, not run: the wgmma kernel's tensor maps prefetched at its start (prefetch.patch; swapab's
# kernels do it, wgmma's do not) against the tree's, over the twenty-first session's k sweep (21 swapped configs at
# m = 1049 and 2086, n = 4096, k = 64, 512, 4096), x cuBLASLt. At k = 64 the swapped kernel trailed cuBLASLt by
# 2.6 us (a cost per tile, not per k step): a descriptor fetched at the first load would be part of it.
# Set up: cp bench/results/2026-11-29/s22-default-next/* .gpu/s22/
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 bench/narrow.py $OUT/po wgmma .gpu/s22/pk.lua wgmma_swap .gpu/s22/pkw.lua wgmma_swap .gpu/s22/pkb.lua || exit 1
python3 bench/narrow.py $OUT/pn wgmma .gpu/s22/pk.lua wgmma_swap .gpu/s22/pkw.lua wgmma_swap .gpu/s22/pkb.lua || exit 1
(cd $OUT/pn && git apply "$OLDPWD/.gpu/s22/prefetch.patch") || exit 1
for v in po pn; do
  t0=$(date +%s)
  AITUNE_HOME=$OUT/$v timeout 90 build/aitune sweep .gpu/s22/pk.yaml --db $OUT/$v.db --vendor time --quiet > $OUT/$v.txt 2> $OUT/$v.err
  echo "$v exit $? in $(( $(date +%s) - t0 )) s"
  python3 .gpu/s22/table.py $OUT/$v.db > $OUT/${v}table.txt
done
tar czf $OUT/pres.tgz -C $OUT po.db pn.db po.err pn.err && rm -rf $OUT/*.db $OUT/*.db.lock $OUT/po $OUT/pn
for v in po pn; do echo "== $v"; sed -n 2,3p $OUT/${v}table.txt; tail -8 $OUT/${v}table.txt | cut -c1-200; done
