#!/usr/bin/env bash
# Session 17, call 1: wgmma widths 112 and 224 (128 / 64 column tiles of
# 14336) at 14336 x 4096 against cuBLASLt, then issue 33's first row at
# 14336 x 4096 with the tree's full space.
set -u
unset AITUNE_HOME
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
python3 bench/narrow.py $OUT/nt wgmma .gpu/s17/space112.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
t0=$(date +%s)
timeout 240 $OUT/nt/build/aitune sweep .gpu/s17/probe112.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"
python3 - $OUT/p.db > $OUT/probe.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {(json.loads(s)["m"], json.loads(s)["n"]): us for s, us in con.execute("select shape, median_us from vendor_times where status='ok'")}
rows = []; bad = 0
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(sh); c = json.loads(c)
    if st != "ok": bad += 1; print("bad", s, st, c); continue
    rows.append((s["m"], s["n"], us, c))
print("not ok:", bad, "ok:", len(rows))
rows.sort(key=lambda r: (r[1], r[0], r[2]))
for (m, n) in sorted(ven, key=lambda x: (x[1], x[0])):
    print("m=%d n=%d cuBLAS %.2f" % (m, n, ven[(m, n)]))
    for r in [x for x in rows if x[0] == m and x[1] == n][:6]:
        c = r[3]; print("   %.2f x%.3f bm%d bn%d st%d %s %s c%d p%d" % (r[2], ven[(m, n)] / r[2], c["bm"], c["bn"], c["stages"], c["cluster"], c["schedule"], c["consumers"], c["persistent"]))
PY
rm -rf $OUT/nt
cat $OUT/probe.txt | head -60
d=$OUT/r1
t0=$(date +%s)
RANGE_EXACT=1 timeout 330 bench/range_scan.sh $d 14336x4096 1:256 8 200s time > $OUT/r1.log 2>&1
echo "scan exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r1.db.gz; rm -f $d/range.db
tar czf $OUT/r1.tgz -C $OUT r1 && rm -rf $d
gzip $OUT/p.db
cat $OUT/gpu.txt; tail -8 $OUT/r1.log
