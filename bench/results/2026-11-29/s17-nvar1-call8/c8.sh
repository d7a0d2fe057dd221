#!/usr/bin/env bash
# Session 17, call 8: the first mid-size kernel choosing its width at run time (nvar),
# verified at odd shapes (split-K 2 and 4, two tiles of rows), timed at 14336 x 4096;
# then issue 33's first row at 14336 x 4096 with the tree.
set -u
python3 bench/narrow.py $OUT/nt swapab .gpu/s17/m1space.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
t0=$(date +%s)
timeout 200 $OUT/nt/build/aitune sweep .gpu/s17/m1probe.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
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
    rs = [x for x in rows if x[0] == m and x[1] == n]
    for r in rs[:4]:
        c = r[3]; print("   %.2f x%.3f bn%d st%d cs%d inf%d nvar%d" % (r[2], ven[(m, n)] / r[2], c["bn"], c["stages"], c["csplit"], c["inflight"], c["nvar"]))
    for nv in (1, 3, 5):
        b = [x for x in rs if x[3]["nvar"] == nv]
        if b: print("   best nvar %d: %.2f x%.3f (bn%d st%d cs%d)" % (nv, b[0][2], ven[(m, n)] / b[0][2], b[0][3]["bn"], b[0][3]["stages"], b[0][3]["csplit"]))
PY
rm -rf $OUT/nt
gzip $OUT/p.db; rm -f $OUT/p.db.lock $OUT/p.txt
cat $OUT/probe.txt | head -70
d=$OUT/r8
t0=$(date +%s)
RANGE_EXACT=1 timeout 200 bench/range_scan.sh $d 14336x4096 1:256 8 100s time > $OUT/r8.log 2>&1
echo "scan exit $? in $(( $(date +%s) - t0 )) s"
gzip -c $d/range.db > $OUT/r8.db.gz; rm -f $d/range.db $d/range.db.lock
tar czf $OUT/r8.tgz -C $OUT r8 && rm -rf $d
tail -4 $OUT/r8.log
