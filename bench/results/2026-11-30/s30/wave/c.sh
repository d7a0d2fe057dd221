#!/usr/bin/env bash
# Prepared in session 30 for the next: the wgmma default's wave model (templates/lib/wgmma_default.lua, WAVE_TILES)
# at the second row's losing sizes. Session 30's call 4 found a 128 x 192 tile with two consumers (one wave of 132
# tiles at 4096^2, m = 744) at 1.062x cuBLASLt where the part held 0.846x and the default takes 128 x 128 with
# stream-K; the model has no 128 x 192 (nor 64 x 256) tile. Exhaustive over wgmma's tiles (bm 64/128, bn
# 128/192/256, 1-2 consumers, 4-6 slots, clusters 1x1/2x1, coop/pingpong, streamk 0) at m = 317..1110 (step 61) at
# 4096^2 and 14336 x 4096: per m the best of each tile (us, its waves), the best overall x cuBLASLt. From it: each
# tile's cost a wave against the 128 x 256 pair's (the model's numbers), and whether the model with 128 x 192 and
# 64 x 256 would pick within 3% of the best. Predicted: 128 x 192 c2 a wave at 0.75-0.86 of the pair's, the best
# at 4096^2's m = 683..744. The default's picks before the probe: default_before.txt. Run from the tree's root, carry ["build/aitune"]; about 2 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s30/wave
python3 bench/narrow.py $OUT/hw wgmma $N/wg.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/hw timeout 400 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"):
    s = json.loads(sh); v[(s["n"], s["m"])] = us
print("statuses:", db.execute("select status, count(*) from measurements group by status").fetchall())
best = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    s = json.loads(sh); c = json.loads(c)
    key = (s["n"], s["m"], (c["bm"], c["bn"], c["consumers"]))
    if us < best.get(key, (1e9,))[0]: best[key] = (us, c)
tiles = sorted({k[2] for k in best})
cdiv = lambda a, b: (a + b - 1) // b
print("per m: cuBLASLt us; each tile's best us / its waves (132 SMs); the best x cuBLASLt")
print("%-6s %-5s %7s " % ("n", "m", "cuBLAS") + "".join("%14s" % ("%dx%d c%d" % t) for t in tiles) + "   best")
for n, m in sorted({k[:2] for k in best}):
    cells, b = [], None
    for t in tiles:
        if (n, m, t) not in best: cells.append("%14s" % "-"); continue
        us, c = best[(n, m, t)]
        waves = cdiv(cdiv(m, t[0]) * cdiv(n, t[1]), 132)
        cells.append("%9.2f/%-4d" % (us, waves))
        if b is None or us < b[0]: b = (us, t, c)
    tag = "%dx%d c%d %s %s st%d" % (b[1] + (b[2]["cluster"], b[2]["schedule"][:4], b[2]["stages"]))
    print("%-6d %-5d %7.2f " % (n, m, v.get((n, m), 0)) + "".join(cells) + "   %.3f %s" % (v.get((n, m), 0) / b[0], tag))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt && rm -rf hw w.db*; ls
