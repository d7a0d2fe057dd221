#!/usr/bin/env bash
# Session 18, call 2: gemv (m = 8) and rowdot (m = 1, 2) wide spaces at 14336 x 4096
set -u
python3 bench/narrow.py $OUT/nt gemv .gpu/s18/gv2.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
t0=$(date +%s)
AITUNE_HOME=$OUT/nt timeout 400 build/aitune sweep .gpu/s18/probe2.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/p.err
python3 - $OUT/p.db > $OUT/probe.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {json.loads(s)["m"]: (us, a) for s, us, a in con.execute("select shape, median_us, algo from vendor_times where status='ok'")}
rows = []; bad = {}
for sh, st, us, c, t in con.execute("select shape, status, median_us, config, template from measurements"):
    s = json.loads(sh)
    if st != "ok": bad[st] = bad.get(st, 0) + 1; continue
    rows.append((s["m"], us, t, c))
print("not ok:", bad, "ok:", len(rows))
for m in sorted(ven):
    v = ven[m][0]
    print("m=%d cuBLASLt %.2f us (%.0f GB/s) algo %s" % (m, v, 14336*4096*2/v/1e3, ven[m][1]))
    rs = sorted([x for x in rows if x[0] == m], key=lambda r: r[1])
    for fam in ("swapab", "gemv", "rowdot"):
        f = [x for x in rs if x[2].endswith(fam)]
        for r in f[:8]:
            print("   %-7s %.2f x%.3f %.0f GB/s %s" % (fam, r[1], v / r[1], 14336*4096*2/r[1]/1e3, r[3]))
PY
rm -rf $OUT/nt
gzip $OUT/p.db; rm -f $OUT/p.db.lock $OUT/p.txt
cat $OUT/probe.txt
