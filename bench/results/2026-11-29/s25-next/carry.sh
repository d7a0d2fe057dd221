#!/usr/bin/env bash
# Prepared in session 25: is the config the carry gives better where call 3 of s25-ranges lost? 14336 x 4096's
# part [193, 216) took wgmma's 128 x 128 (50.4 us at 193, 0.81x cuBLASLt); the part below's winner, swapab bm 128
# bn 192, carried to 215 is bn 224. Exhaustive over swapab bm 128, bn 192/224/256, one split of k (sa.lua) and
# that wgmma config (w.lua), x cuBLASLt, at m = 193..255. Predicted: swapab's one tile (bn >= m) 0.90-0.95x,
# bn 192 at m > 192 (two tiles) and wgmma's 128 x 128 about 0.8x. Run from the tree's root, carry ["build/aitune"];
# under a minute.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s25-next
python3 bench/narrow.py $OUT/h swapab $N/sa.lua wgmma $N/w.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 200 build/aitune sweep $N/carry.yaml --db $OUT/c.db --vendor time --budget 180s --quiet > $OUT/c.txt 2> $OUT/c.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/c.err
python3 - $OUT/c.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
best = {}
for sh, t, us, c in db.execute("select shape, template, median_us, config from measurements where status = 'ok'"):
    m = json.loads(sh)["m"]; c = json.loads(c)
    k = ("swapab bn %d" % c["bn"]) if t.endswith("swapab") else "wgmma 128x128"
    if us < best.get((m, k), (1e9,))[0]: best[(m, k)] = (us, c)
keys = sorted({k for _, k in best})
print("%-6s %9s" % ("m", "cuBLASLt") + "".join("%16s" % k for k in keys))
for m in sorted({m for m, _ in best}):
    print("%-6d %9.2f" % (m, v.get(m, float("nan"))) + "".join(
        "%9.2f %5.3fx" % (best[(m, k)][0], v.get(m, 0) / best[(m, k)][0]) if (m, k) in best else "%16s" % "-" for k in keys))
PY
cd $OUT && tar czf all.tgz c.db c.txt c.err table.txt && rm -rf h c.db*; ls
