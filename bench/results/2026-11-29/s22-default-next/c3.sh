#!/usr/bin/env bash
# Prepared in session 22, not run: the wgmma kernel's tensor maps prefetched at its start (prefetch.patch; swapab's
# kernels do it, wgmma's do not) against the tree's, over the twenty-first session's k sweep (21 swapped configs at
# m = 1049 and 2086, n = 4096, k = 64, 512, 4096), x cuBLASLt. At k = 64 the swapped kernel trailed cuBLASLt by
# 2.6 us (a cost per tile, not per k step): a descriptor fetched at the first load would be part of it.
# Needs no set-up: run from the tree's root.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
K=bench/results/2026-11-29/s21-swapk-call1     # the twenty-first session's narrowed space
for v in po pn; do python3 bench/narrow.py $OUT/$v wgmma $K/k.lua wgmma_swap $K/kw.lua wgmma_swap $K/kb.lua || exit 1; done
(cd $OUT/pn && git apply "$OLDPWD/bench/results/2026-11-29/s22-default-next/prefetch.patch") || exit 1
for v in po pn; do
  t0=$(date +%s)
  AITUNE_HOME=$OUT/$v timeout 90 build/aitune sweep $K/k.yaml --db $OUT/$v.db --vendor time --quiet > $OUT/$v.txt 2> $OUT/$v.err
  echo "$v exit $? in $(( $(date +%s) - t0 )) s"
  python3 bench/results/2026-11-29/s22-cols-call1/table.py $OUT/$v.db > $OUT/${v}table.txt
done
tar czf $OUT/pres.tgz -C $OUT po.db pn.db po.err pn.err && rm -rf $OUT/*.db $OUT/*.db.lock $OUT/po $OUT/pn
for v in po pn; do echo "== $v"; sed -n 2,3p $OUT/${v}table.txt; tail -8 $OUT/${v}table.txt | cut -c1-200; done
