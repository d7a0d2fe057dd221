#!/usr/bin/env bash
# Session 23, call 6: did this session's wgmma changes slow the unswapped kernel? Call 5 measured 128-row tiles at
# 4096^2 m 317 in 30.4-31.5 us where the fifteenth session had 24.3 (cuBLASLt 19.5 / 19.6 both). Three template
# trees, the same narrowed unswapped space (ab.lua), twice each in turn: t0 the session's start (24aad47), t1
# uniform descriptors and lean swapped stores (ffd7936), t2 and PDL (this tree). The trees t0 and t1 come in .gpu/ab
# (git archive of templates/ and search/); carry [".gpu", "build/aitune"].
# Set-up here: mkdir -p .gpu/ab/t0 .gpu/ab/t1; git archive 24aad47 templates search | tar -x -C .gpu/ab/t0;
# git archive ffd7936 templates search | tar -x -C .gpu/ab/t1.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=bench/results/2026-11-29/s23-ab
(cd .gpu/ab/t0 && python3 $OLDPWD/bench/narrow.py $OUT/h0 wgmma $OLDPWD/$P/ab.lua > /dev/null) || exit 1
(cd .gpu/ab/t1 && python3 $OLDPWD/bench/narrow.py $OUT/h1 wgmma $OLDPWD/$P/ab.lua > /dev/null) || exit 1
python3 bench/narrow.py $OUT/h2 wgmma $P/ab.lua > /dev/null || exit 1
for r in a b; do for v in 0 1 2; do
  t0=$(date +%s)
  AITUNE_HOME=$OUT/h$v timeout 100 build/aitune sweep $P/ab.yaml --db $OUT/$v$r.db --vendor time --budget 90s --quiet > $OUT/$v$r.txt 2> $OUT/$v$r.err
  echo "t$v run $r exit $? in $(( $(date +%s) - t0 )) s"
done; done
C=bench/results/2026-11-29/s23-pdl/cmp.py
for x in "0a 0b" "0a 1a" "0b 1b" "1a 2a" "1b 2b" "0a 2a" "0b 2b"; do set -- $x; echo "== $1 -> $2"; python3 $C $OUT/$1.db $OUT/$2.db; done | tee $OUT/ab.cmp
python3 - $OUT <<'PY' | tee $OUT/ab_cfg.txt
import sqlite3, sys, json, glob, os
out = sys.argv[1]; t = {}
for db in sorted(glob.glob(out + "/*.db")):
    run = os.path.basename(db)[:-3]
    for sh, us, c in sqlite3.connect(db).execute("select shape, median_us, config from measurements where status='ok'"):
        d = json.loads(sh); c = json.loads(c)
        t.setdefault(("%d/%d" % (d["n"], d["m"]), "%dx%d c%d st%d" % (c["bm"], c["bn"], c["consumers"], c["stages"])), {})[run] = us
runs = ["0a", "0b", "1a", "1b", "2a", "2b"]
print("%-12s %-18s" % ("n/m", "config") + "".join("%8s" % r for r in runs))
for k in sorted(t): print("%-12s %-18s" % k + "".join("%8.2f" % t[k].get(r, float("nan")) for r in runs))
PY
tar czf $OUT/ab.tgz -C $OUT $(cd $OUT && ls *.db *.txt *.err) && rm -rf $OUT/h0 $OUT/h1 $OUT/h2 $OUT/*.db $OUT/*.db.lock $OUT/*.err $OUT/[012][ab].txt
