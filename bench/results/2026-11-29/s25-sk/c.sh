#!/usr/bin/env bash
# Session 25: stream-K in the swapped wgmma kernel at 14336 x 4096, m = 160..378 (issue 33's first row's worst weight:
# 112 tiles of 128 weight rows leave 20 of 132 SMs idle; stream-K spreads the 112 x 64 k-steps over all 132).
# The copy's MIN_M is lowered to 128 so the swapped kernel serves m 129..256. Exhaustive over w/swid/srows/sw.lua,
# x cuBLASLt in the same run. Predicted: stream-K 128 x 208..256 ~1.15x its data-parallel twin at m 160..253.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s25-sk
python3 bench/narrow.py $OUT/h wgmma $N/w.lua wgmma_swap $N/swid.lua wgmma_swap $N/srows.lua wgmma_swap $N/sw.lua > /dev/null || exit 1
sed -i 's/^M.MIN_M = 256/M.MIN_M = 128/' $OUT/h/templates/lib/wgmma_swap.lua; grep -n "^M.MIN_M" $OUT/h/templates/lib/wgmma_swap.lua
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 240 build/aitune sweep $N/sk.yaml --db $OUT/sk.db --vendor time --budget 220s --quiet > $OUT/sk.txt 2> $OUT/sk.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -4 $OUT/sk.err
python3 - $OUT/sk.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
rows = {}
for sh, us, c, st in db.execute("select shape, median_us, config, status from measurements"):
    m = json.loads(sh)["m"]; c = json.loads(c)
    k = "%dx%d c%d %s sk%d st%d pr%d" % (c["bm"], c["bn"], c["consumers"], c["schedule"][:4], c["streamk"], c["stages"], c["producer_regs"])
    rows.setdefault(m, []).append((us if st == "ok" else 1e9, k, st))
for m in sorted(rows):
    best = {}
    for us, k, st in rows[m]:
        sk = " sk1" in k
        if us < best.get(sk, (1e9,))[0]: best[sk] = (us, k)
    print("m=%d vendor %.2f  n=%d (%d not ok)" % (m, v.get(m, float("nan")), len(rows[m]), sum(1 for r in rows[m] if r[2] != "ok")))
    for sk in (False, True):
        if sk in best: print("   best sk%d %8.2f  %.3fx  %s" % (sk, best[sk][0], v.get(m, 0) / best[sk][0], best[sk][1]))
PY
cd $OUT && tar czf all.tgz sk.db sk.txt sk.err table.txt && rm -rf h sk.db*; ls
