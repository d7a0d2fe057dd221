#!/usr/bin/env bash
# Programmatic dependent launch in the wgmma kernel (pdl.patch: every config without a workspace launches with
# the attribute, sets up under the previous launch's tail, waits before touching global memory).
# compute-sanitizer over the patched tree, then the tree (o) against the patch (d), swapped (k: the twenty-first
# session's k sweep) and unswapped (u: 4096^2 m 1781/4096, 14336x4096 m 256), each by stream timing and by
# neighbour timing (a kernel that never signals before each launch, as in a model's graph). x cuBLASLt each.
# Run from the tree's root with carry ["build/aitune"], no set-up.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
K=bench/results/2026-11-29/s21-swapk-call1
P=bench/results/2026-11-29/s23-pdl
for v in o d; do
  python3 bench/narrow.py $OUT/s$v wgmma $K/k.lua wgmma_swap $K/kw.lua wgmma_swap $K/kb.lua > /dev/null || exit 1
  python3 bench/narrow.py $OUT/u$v wgmma $P/u.lua > /dev/null || exit 1
done
if git apply --check $P/pdl.patch 2>/dev/null; then OLDTREE=reverse; else OLDTREE=; fi
# The tree may hold the patch already (landed) or not: o is without it, d with it.
for t in s u; do
  if [ -n "$OLDTREE" ]; then (cd $OUT/${t}d && git apply --include='templates/*' "$OLDPWD/$P/pdl.patch") || exit 1
  else (cd $OUT/${t}o && git apply -R --include='templates/*' "$OLDPWD/$P/pdl.patch") || exit 1; fi
done
grep -c griddepcontrol $OUT/sd/templates/lib/wgmma_mainloop.lua $OUT/so/templates/lib/wgmma_mainloop.lua
t0=$(date +%s)
AITUNE_HOME=$OUT/sd SANITIZE_SPEC=$P/san.yaml SANITIZE_ARGS="--vendor off" timeout 90 tests/gpu/sanitize.sh $OUT/san > $OUT/san.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.txt
run() {  # tree spec db
  local t0=$(date +%s)
  AITUNE_HOME=$OUT/$1 timeout 100 build/aitune sweep $2 --db $OUT/$3.db --vendor time --budget 90s --quiet > $OUT/$3.txt 2> $OUT/$3.err
  echo "$3 exit $? in $(( $(date +%s) - t0 )) s"
}
for v in o d; do run s$v $K/k.yaml ks$v; run s$v $P/kn.yaml kn$v; run u$v $P/u.yaml us$v; run u$v $P/un.yaml un$v; done
for x in ks kn us un; do echo "== $x (o: tree without pdl, d: with)"; python3 $P/cmp.py $OUT/${x}o.db $OUT/${x}d.db | tee $OUT/$x.cmp; done
tar czf $OUT/pdl.tgz -C $OUT $(cd $OUT && ls *.db *.err san.txt) 2>/dev/null
rm -rf $OUT/so $OUT/sd $OUT/uo $OUT/ud $OUT/*.db $OUT/*.db.lock $OUT/*.err $OUT/*.txt $OUT/san
