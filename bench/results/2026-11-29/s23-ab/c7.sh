#!/usr/bin/env bash
# Session 23, call 7: (1) the swapped kernel with PDL (t2, this tree) against without (t1, ffd7936) at prefill's
# low end and 1049 (s.lua: bm 64/128, bn 128/160/192, both schedules), twice each in turn; (2) why PDL slowed the
# unswapped 128 x 128 tiles at 4096^2 m 317 and 439 by 20-25% (call 6): t3 is t2 with the dependents' trigger moved
# from the kernel's start to its end (after every tile), so the next launch's CTAs cannot take the SMs this
# grid leaves idle while it runs. Trees t1 and t3 come in .gpu/ab; carry [".gpu", "build/aitune"].
# Set-up here: t1 as for c6.sh; t3: git archive 07cf9a4 templates search | tar -x -C .gpu/ab/t3, then in
# its templates/lib/wgmma_mainloop.lua the launch_dependents line moved from the kernel's start into TAIL (#if PDL).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=bench/results/2026-11-29/s23-ab
R=$PWD
S="wgmma $R/$P/s.lua wgmma_swap $R/$P/swid.lua wgmma_swap $R/$P/srows.lua wgmma_swap $R/$P/sw.lua"
(cd .gpu/ab/t1 && python3 $R/bench/narrow.py $OUT/s1 $S > /dev/null) || exit 1
python3 bench/narrow.py $OUT/s2 $S > /dev/null || exit 1
for t in 1 3; do (cd .gpu/ab/t$t && python3 $R/bench/narrow.py $OUT/u$t wgmma $R/$P/ab.lua > /dev/null) || exit 1; done
python3 bench/narrow.py $OUT/u2 wgmma $P/ab.lua > /dev/null || exit 1
sw() {  # home spec db
  local t0=$(date +%s)
  AITUNE_HOME=$OUT/$1 timeout 100 build/aitune sweep $2 --db $OUT/$3.db --vendor time --budget 90s --quiet > $OUT/$3.txt 2> $OUT/$3.err
  echo "$3 exit $? in $(( $(date +%s) - t0 )) s"
}
for r in a b; do sw s1 $P/s.yaml s1$r; sw s2 $P/s.yaml s2$r; sw u1 $P/ablow.yaml u1$r; sw u2 $P/ablow.yaml u2$r; sw u3 $P/ablow.yaml u3$r; done
C=bench/results/2026-11-29/s23-pdl/cmp.py
for x in "s1a s1b" "s1a s2a" "s1b s2b" "u1a u2a" "u1b u2b" "u1a u3a" "u1b u3b"; do set -- $x; echo "== $1 -> $2"; python3 $C $OUT/$1.db $OUT/$2.db; done | tee $OUT/ab2.cmp
python3 - $OUT <<'PY' | tee $OUT/ab2_cfg.txt
import sqlite3, sys, json, glob, os
out = sys.argv[1]; t = {}
for db in sorted(glob.glob(out + "/*.db")):
    run = os.path.basename(db)[:-3]
    for sh, us, c in sqlite3.connect(db).execute("select shape, median_us, config from measurements where status='ok'"):
        d = json.loads(sh); c = json.loads(c)
        t.setdefault((run[0], "%d/%d" % (d["n"], d["m"]), "%dx%d c%d st%d %s" % (c["bm"], c["bn"], c["consumers"], c["stages"], c["schedule"][:4])), {})[run[1:]] = us
for fam, runs in (("s", ["1a", "1b", "2a", "2b"]), ("u", ["1a", "1b", "2a", "2b", "3a", "3b"])):
    print("%-12s %-22s" % ("n/m", fam + " config") + "".join("%8s" % r for r in runs))
    for k in sorted(k for k in t if k[0] == fam): print("%-12s %-22s" % k[1:] + "".join("%8.2f" % t[k].get(r, float("nan")) for r in runs))
PY
tar czf $OUT/ab2.tgz -C $OUT $(cd $OUT && ls *.db *.txt *.err) && rm -rf $OUT/s[12] $OUT/u[123] $OUT/*.db $OUT/*.db.lock $OUT/*.err $OUT/[su][123][ab].txt
