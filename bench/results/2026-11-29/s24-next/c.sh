#!/usr/bin/env bash
# Prepared in session 24 for the next: B's tail map for the swapped kernel (b_tail.patch: at a fixed width, the last
# column of tiles loads B, the GEMM's A, through a map whose box holds only that column's rows of m, rounded up to 8).
# Why: s23-next/c9.sh measured a swapped 64 x 192 tile at 4096^2 m = 317 (67 rows of B past m) in 35.6 us, at 378
# (6 past) in 21.5; run-time widths (wstep 16) ran 19.8 and 21.5. compute-sanitizer over patched kernels (fixed
# width, m = 317), then the tree (o) against the patch (t) over w.lua x swid.lua x srows.lua x sw.lua (8 configs:
# 128-row tiles, widths 160 and 192, one or two consumers, wstep 0 and 16), twice each in turn, x cuBLASLt.
# Predicted: wstep 0 at m = 317 within 10% of m = 378's time; wstep 16 unchanged. Run from the tree's root with
# carry ["build/aitune"]; about 2 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s24-next
for v in o t; do python3 bench/narrow.py $OUT/$v wgmma $N/w.lua wgmma_swap $N/swid.lua wgmma_swap $N/srows.lua wgmma_swap $N/sw.lua > /dev/null || exit 1; done
python3 bench/narrow.py $OUT/ts wgmma_swap $N/sw0.lua > /dev/null || exit 1    # the sanitizer's: every fixed-width config
if git apply --check $N/b_tail.patch 2>/dev/null; then
  for v in t ts; do (cd $OUT/$v && git apply --include='templates/*' "$OLDPWD/$N/b_tail.patch") || exit 1; done
else   # landed: o is the tree without it
  (cd $OUT/o && git apply -R --include='templates/*' "$OLDPWD/$N/b_tail.patch") || exit 1
fi
grep -c "tmBt" $OUT/o/templates/lib/wgmma.lua $OUT/t/templates/lib/wgmma.lua $OUT/ts/templates/lib/wgmma.lua
t0=$(date +%s)
AITUNE_HOME=$OUT/ts SANITIZE_SPEC=$N/san.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san > $OUT/san.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.txt
for r in a b; do for v in o t; do
  t0=$(date +%s)
  AITUNE_HOME=$OUT/$v timeout 100 build/aitune sweep $N/ab.yaml --db $OUT/$v$r.db --vendor time --budget 90s --quiet > $OUT/$v$r.txt 2> $OUT/$v$r.err
  echo "$v$r exit $? in $(( $(date +%s) - t0 )) s"
done; done
C=bench/results/2026-11-29/s23-pdl/cmp.py
for x in "oa ob" "oa ta" "ob tb"; do set -- $x; echo "== $1 -> $2"; python3 $C $OUT/$1.db $OUT/$2.db; done | tee $OUT/tail.cmp
python3 - $OUT <<'PY' | tee $OUT/tail_cfg.txt
import sqlite3, sys, json, glob, os
out = sys.argv[1]; t = {}
for db in sorted(glob.glob(out + "/[ot][ab].db")):
    run = os.path.basename(db)[:-3]
    for sh, us, c in sqlite3.connect(db).execute("select shape, median_us, config from measurements where status='ok'"):
        d = json.loads(sh); c = json.loads(c)
        past = (c["bn"] - d["m"] % c["bn"]) % c["bn"] if not c.get("wstep") else -1
        t.setdefault(("%d/%d" % (d["n"], d["m"]), "%dx%d c%d w%d" % (c["bm"], c["bn"], c["consumers"], c.get("wstep", 0)), past), {})[run] = us
runs = ["oa", "ob", "ta", "tb"]
print("%-12s %-18s %5s" % ("n/m", "config", "past") + "".join("%8s" % r for r in runs))
for k in sorted(t): print("%-12s %-18s %5d" % k + "".join("%8.2f" % t[k].get(r, float("nan")) for r in runs))
PY
cd $OUT && tar czf all.tgz *.db *.txt *.err && rm -rf o t ts san *.db *.db.lock *.err [ot][ab].txt; ls
