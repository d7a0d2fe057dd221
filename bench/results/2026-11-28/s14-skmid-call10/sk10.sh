#!/usr/bin/env bash
# Call 10 (s14): swapab's stream-K mid-size kernel (sk 1) against the first kernel (sk 0, pdl 0 and 1) at
# 14336 x 4096, m = 129, 200, 255, and a ragged 200 x 1000 x 1096 (boxes past n and k); every candidate verified.
set -u
unset AITUNE_HOME
python3 bench/narrow.py $OUT/nt swapab .gpu/s14/spacesk2.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
timeout 150 $OUT/nt/build/aitune sweep .gpu/s14/probesk2.yaml --db $OUT/sk.db --vendor time --quiet > $OUT/sk.txt 2> $OUT/sk.err
echo "exit $?"; grep -E '^(sweep|vendor):' $OUT/sk.err
python3 - $OUT/sk.db <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    s = json.loads(s); ven[(s["n"], s["m"])] = us
best = {}; bad = []
for s, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(s); c = json.loads(c); key = (s["n"], s["m"], "sk1" if c.get("sk") else "pdl%d" % c["pdl"])
    if st != "ok": bad.append((s["n"], s["m"], st, c)); continue
    if key not in best or us < best[key][0]: best[key] = (us, c)
print("not ok:", len(bad)); [print("  ", b) for b in bad[:8]]
print("%6s %4s %8s | %18s %18s %18s | sk1 x cuBLAS" % ("n", "m", "cuBLAS", "sk0 pdl0", "sk0 pdl1", "sk1"))
for (n, m) in sorted(ven):
    cells = []
    for t in ("pdl0", "pdl1", "sk1"):
        b = best.get((n, m, t))
        cells.append("%7.2f bm%d bn%d" % (b[0], b[1]["bm"], b[1]["bn"]) if b else "-")
    b = best.get((n, m, "sk1"))
    print("%6d %4d %8.2f | %18s %18s %18s | %.3f" % (n, m, ven[(n, m)], cells[0], cells[1], cells[2], ven[(n, m)] / b[0] if b else 0))
PY
rm -rf $OUT/nt
