#!/usr/bin/env bash
# Call 10: swapab mid-size at 14336 x 4096, m = 129, 190: do shallow rings (2 CTAs an SM, all 224 column tiles at once) beat deep ones?

set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
python3 bench/narrow.py $OUT/h8 swapab .gpu/space10.lua || exit 1
AITUNE_HOME=$OUT/h8 timeout 200 build/aitune sweep .gpu/probe10.yaml --db $OUT/b.db --vendor time --quiet > $OUT/b.txt 2> $OUT/b.err
echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
python3 - $OUT/b.db <<'PY' | tee $OUT/b_table.txt
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {json.loads(s)["m"]: us for s, us in con.execute("select shape, median_us from vendor_times where status = 'ok'")}
best = {}; bad = 0; allr = []
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    m = json.loads(sh)["m"]; c = json.loads(c)
    if st != "ok": bad += 1; continue
    key = (m, c["bm"], c["csplit"], c["stages"])
    if key not in best or us < best[key][0]: best[key] = (us, c)
print("not ok:", bad, "; cuBLASLt:", {m: "%.2f us %.0f GB/s" % (v, 14336 * 4096 * 2 / v / 1e3) for m, v in ven.items()})
print("m bm cs CTAs best_us GB/s x_cuBLAS config(bn st kbox pdl)")
for (m, bm, cs, st), (us, c) in sorted(best.items()):
    print(m, bm, cs, 14336 // bm * cs, "%.2f" % us, "%.0f" % (14336 * 4096 * 2 / us / 1e3), "%.3f" % (ven[m] / us), c["bn"], c["stages"], c["kbox"], c["pdl"])
PY
rm -rf $OUT/h8
