#!/usr/bin/env bash
# Prepared in session 23 for the next: A's tail map (a_tail.patch: the last row of tiles loads A through a map whose
# box holds only the rows of m it has, so TMA zero-fills at most 7 rows past m). Why: in the twenty-third session's
# scan (s23-row2/call3/range_table.txt) one unswapped 128 x 128 winner ran 4096^2 m = 4099 in 219.7 us, 4160 in
# 216.4 and 4221 in 206.8 (125, 64 and 3 rows past m in its last row, 33 rows of tiles each); 4282 236.7 against
# 4343 231.3; 4892 266.7 against 4953 258.9. compute-sanitizer over the patched kernels (nt and nn at a ragged
# shape), then the tree (o) against the patch (t) over s23-ab's unswapped space (ab.lua, 13 configs), twice each
# in turn, x cuBLASLt. Run from the tree's root with carry ["build/aitune"]; no set-up.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=bench/results/2026-11-29/s23-next
A=bench/results/2026-11-29/s23-ab
for v in o t; do python3 bench/narrow.py $OUT/$v wgmma $A/ab.lua > /dev/null || exit 1; done
rm -rf $OUT/ts && mkdir -p $OUT/ts && cp -r templates search $OUT/ts/    # the sanitizer's tree: the whole space
if git apply --check $P/a_tail.patch 2>/dev/null; then
  for v in t ts; do (cd $OUT/$v && git apply --include='templates/*' "$OLDPWD/$P/a_tail.patch") || exit 1; done
else   # landed: o is the tree without it
  (cd $OUT/o && git apply -R --include='templates/*' "$OLDPWD/$P/a_tail.patch") || exit 1
fi
grep -c "tmAt" $OUT/o/templates/lib/wgmma.lua $OUT/t/templates/lib/wgmma.lua $OUT/ts/templates/lib/wgmma.lua
t0=$(date +%s)
AITUNE_HOME=$OUT/ts SANITIZE_SPEC=$P/tail_san.yaml SANITIZE_ARGS="--vendor off" timeout 120 tests/gpu/sanitize.sh $OUT/san > $OUT/san.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.txt
for r in a b; do for v in o t; do
  t0=$(date +%s)
  AITUNE_HOME=$OUT/$v timeout 100 build/aitune sweep $P/tail.yaml --db $OUT/$v$r.db --vendor time --budget 90s --quiet > $OUT/$v$r.txt 2> $OUT/$v$r.err
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
        past = (c["bm"] - d["m"] % c["bm"]) % c["bm"]
        t.setdefault(("%d/%d" % (d["n"], d["m"]), "%dx%d c%d st%d" % (c["bm"], c["bn"], c["consumers"], c["stages"]), past), {})[run] = us
runs = ["oa", "ob", "ta", "tb"]
print("%-12s %-18s %5s" % ("n/m", "config", "past") + "".join("%8s" % r for r in runs))
for k in sorted(t): print("%-12s %-18s %5d" % k + "".join("%8.2f" % t[k].get(r, float("nan")) for r in runs))
PY
tar czf $OUT/tail.tgz -C $OUT $(cd $OUT && ls *.db *.txt *.err) && rm -rf $OUT/o $OUT/t $OUT/ts $OUT/san $OUT/*.db $OUT/*.db.lock $OUT/*.err $OUT/[ot][ab].txt
