#!/usr/bin/env bash
# Session 18, call 9: swapab at 1024 x 4096, m = 100, 112, 127, 128: bn 96 (two row tiles) against bn 128 (one), x cuBLASLt
set -u
python3 bench/narrow.py $OUT/nt swapab .gpu/s18/sw9.lua || exit 1
AITUNE_HOME=$OUT/nt timeout 200 build/aitune sweep .gpu/s18/probe9.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
echo "probe exit $?"; tail -2 $OUT/p.err
python3 - $OUT/p.db > $OUT/probe.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {json.loads(s)["m"]: us for s, us in con.execute("select shape, median_us from vendor_times where status='ok'")}
rows = []
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements where status='ok'"):
    rows.append((json.loads(sh)["m"], us, json.loads(c)))
for m in sorted(ven):
    print("m=%d cuBLASLt %.2f" % (m, ven[m]))
    for bn in (96, 128):
        rs = sorted([r for r in rows if r[0] == m and r[2]["bn"] == bn], key=lambda r: r[1])
        for r in rs[:3]:
            c = r[2]; print("   bn%d %.2f x%.3f bm%d cs%d st%d nvar%d" % (bn, r[1], ven[m] / r[1], c["bm"], c["csplit"], c["stages"], c["nvar"]))
PY
rm -rf $OUT/nt; gzip $OUT/p.db; rm -f $OUT/p.db.lock $OUT/p.txt
cat $OUT/probe.txt
