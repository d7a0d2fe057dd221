#!/usr/bin/env bash
# s15 call 5: wgmma below a full wave of 128x256 pairs (row 2's m = 256..1023): which tile, cluster and stream-K
# fill 132 SMs there, against the default (bm 128, bn 256, 2x1) and cuBLASLt, exhaustive over a narrowed space.
set -u
unset AITUNE_HOME
python3 bench/narrow.py $OUT/nt wgmma .gpu/s15/space5.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
t0=$(date +%s)
AITUNE_HOME=$OUT/nt timeout 420 $OUT/nt/build/aitune sweep .gpu/s15/probe5.yaml --db $OUT/p5.db --vendor time --quiet > $OUT/p5.txt 2> $OUT/p5.err
echo "sweep exit $?, $(( $(date +%s) - t0 )) s"; grep -E "^(sweep|vendor):" $OUT/p5.err
python3 - $OUT/p5.db > $OUT/table5.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    s = json.loads(s); ven[(s["n"], s["m"])] = us
best, kinds, bad = {}, {}, 0
for s, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(s); c = json.loads(c); key = (s["n"], s["m"])
    if st != "ok":
        if st in ("wrong", "runtime", "timeout"): bad += 1
        continue
    kind = "bm%d bn%d c%d %s sk%d" % (c["bm"], c["bn"], c["consumers"], c["cluster"], c["streamk"])
    k2 = key + (kind,)
    if k2 not in kinds or us < kinds[k2][0]: kinds[k2] = (us, c["stages"])
    if key not in best or us < best[key][0]: best[key] = (us, kind + " st%d" % c["stages"])
allk = sorted({k[2] for k in kinds})
print("wrong/runtime/timeout candidates: %d" % bad)
print("%6s %5s %7s %7s %6s | best kind" % ("n", "m", "cuBLAS", "best", "x cb"))
for key in sorted(ven):
    b = best.get(key, (0, "-"))
    print("%6d %5d %7.1f %7.1f %6.3f | %s" % (key + (ven[key], b[0], ven[key] / b[0] if b[0] else 0, b[1])))
print()
print("us per kind (best over stages), rows = kinds, cols = shapes:")
keys = sorted(ven)
print("%-26s " % "kind" + " ".join("%5d/%-4d" % (n // 1024, m) for n, m in keys))
for k in allk:
    print("%-26s " % k + " ".join("%10.1f" % kinds[key + (k,)][0] if key + (k,) in kinds else "%10s" % "-" for key in keys))
PY
cat $OUT/table5.txt
rm -rf $OUT/nt $OUT/p5.db*
