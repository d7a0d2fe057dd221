#!/usr/bin/env bash
# Prepared in session 29 for the next: the mid-size kernel's default hints. The range winners above m = 64 in
# sessions 28-29 had evict 1 in 38 of 60 (l2pre 1 in 21), the mid-size default (templates/lib/swapab_default.lua)
# neither. Exhaustive over swapab's first mid-size kernel (bm 64/128, bn = the widths above 64 that hold m, csplit
# 1/2, 4/5 slots, l2pre 0/1/2, evict 0/1) at the four weights of issue 33's first row, m = 72, 128, 190. The table:
# per weight and m, each (evict, l2pre) pair's median time over (0, 0) across every other param, and the best of
# each pair x cuBLASLt. Predicted: evict 1 2-5% faster at 14336 x 4096 and 4096 x 14336 (weights past L2), within
# 1% at 1024 x 4096; l2pre 1 within 1% everywhere. If evict 1 wins at every weight, the mid default takes it.
# Run from the tree's root, carry ["build/aitune"]; about 3 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s29/mid
python3 bench/narrow.py $OUT/h swapab $N/sa.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 420 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json, statistics as st
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"):
    s = json.loads(sh); v[(s["n"], s["k"], s["m"])] = us
T = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    s = json.loads(sh); c = json.loads(c)
    if c["bn"] <= 64: continue
    T[(s["n"], s["k"], s["m"], c["bm"], c["bn"], c["csplit"], c["stages"], c["evict"], c["l2pre"])] = us
pairs = [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
print("%-11s %-4s %8s  %s" % ("weight", "m", "cuBLAS", "  ".join("ev%d l%d: med ratio, best x" % p for p in [(0, 0)] + pairs)))
for key in sorted({k[:3] for k in T}):
    cells = []
    for ev, lp in [(0, 0)] + pairs:
        r = [T[k[:7] + (ev, lp)] / T[k] for k in T if k[:3] == key and k[7:] == (0, 0) and k[:7] + (ev, lp) in T]
        b = min([u for k, u in T.items() if k[:3] == key and k[7:] == (ev, lp)] or [0])
        cells.append("%5.3f %5.3f" % (st.median(r) if r else float("nan"), v.get(key, 0) / b if b else 0))
    print("%-11s %-4d %8.2f  %s" % ("%dx%d" % key[:2], key[2], v.get(key, float("nan")), "   ".join(cells)))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt && rm -rf h w.db*; ls
