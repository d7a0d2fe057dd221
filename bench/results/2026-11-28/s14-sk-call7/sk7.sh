#!/usr/bin/env bash
# Call 7 (s14): wgmma's default shape (bm 128, 2 consumers, coop, persistent, tma stores) with and without
# stream-K's tail split, bn 128/256, cluster 1x1/2x1, at the large m where row 2's scan had its sawtooth.
set -u
unset AITUNE_HOME
python3 bench/narrow.py $OUT/nt wgmma .gpu/s14/spacesk.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
timeout 300 $OUT/nt/build/aitune sweep .gpu/s14/probesk.yaml --db $OUT/sk.db --vendor time --quiet > $OUT/sk.txt 2> $OUT/sk.err
echo "exit $?"; tail -2 $OUT/sk.err
python3 - $OUT/sk.db <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    s = json.loads(s); ven[(s["n"], s["m"])] = us
t = {}
for s, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(s); c = json.loads(c)
    key = (s["n"], s["m"], c["bn"], c["cluster"], c["streamk"])
    if st == "ok" and (key not in t or us < t[key]): t[key] = us
print("%6s %5s %8s | %s" % ("n", "m", "cuBLAS", "  ".join("bn%d %s sk0/sk1" % (bn, cl) for bn in (128, 256) for cl in ("1x1", "2x1"))))
for (n, m) in sorted(ven):
    cells = []
    for bn in (128, 256):
        for cl in ("1x1", "2x1"):
            a, b = t.get((n, m, bn, cl, 0), 0), t.get((n, m, bn, cl, 1), 0)
            cells.append("%7.1f/%7.1f" % (a, b))
    print("%6d %5d %8.1f | %s" % (n, m, ven[(n, m)], "  ".join(cells)))
PY
rm -rf $OUT/nt
