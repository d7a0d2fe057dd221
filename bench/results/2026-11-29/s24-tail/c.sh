#!/usr/bin/env bash
# Twenty-fourth session, call 2: A's tail map under a 1x2 cluster (each CTA of the pair loads half of the last
# tile row's rows of m, rounded up to 8). compute-sanitizer over such kernels at a ragged shape (nt and nn), then
# the tree before the tail map (.gpu/s24o, HEAD 88ff0f4's templates) against it (.gpu/s24t), both narrowed to
# c12.lua's 1x2 configs, twice each in turn, x cuBLASLt. Trees made here by:
#   git archive 88ff0f4 templates search | tar -x -C SRC; cd SRC && python3 bench/narrow.py .gpu/s24o wgmma c12.lua
#   python3 bench/narrow.py .gpu/s24t wgmma c12.lua          (from the tree with the 1x2 tail)
# Run from the tree's root with carry ["build/aitune", ".gpu"].
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
D=bench/results/2026-11-29/s24-tail
t0=$(date +%s)
AITUNE_HOME=$PWD/.gpu/s24t SANITIZE_SPEC=$D/san.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san > $OUT/san.txt 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.txt
for r in a b; do for v in o t; do
  t0=$(date +%s)
  AITUNE_HOME=$PWD/.gpu/s24$v timeout 100 build/aitune sweep $D/ab.yaml --db $OUT/$v$r.db --vendor time --budget 90s --quiet > $OUT/$v$r.txt 2> $OUT/$v$r.err
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
cd $OUT && tar czf all.tgz *.db *.txt *.err && rm -f *.db *.db.lock *.err [ot][ab].txt; ls
