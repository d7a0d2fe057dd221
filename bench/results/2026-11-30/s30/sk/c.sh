#!/usr/bin/env bash
# Session 30: issue 33's second row at 4096^2 loses 5-15% at m = 317..1049 (call 3: 0.846 at m = 744, the
# part [769, 1024) flat at 47 us where cuBLASLt runs 40.0-46.6 from m = 805 to 988, a ragged second wave of
# 128 x 128 tiles). Exhaustive over wgmma (bm 64/128, bn 128/192/256, 1-2 consumers, 4-6 slots, clusters
# 1x1/2x1, coop/pingpong, streamk 0/1) at m = 317, 439, 744, 805, 866, 927 against cuBLASLt: the best of each
# streamk. Predicted: streamk 1 (the last wave's tiles split along k) within 5% of cuBLASLt at 805..927,
# where streamk 0's best stays near 47 us. Run from the tree's root, carry ["build/aitune"]; about 2 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s30/sk
python3 bench/narrow.py $OUT/hw wgmma $N/wg.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/hw timeout 300 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
print("statuses:", db.execute("select status, count(*) from measurements group by status").fetchall())
best = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    m = json.loads(sh)["m"]; c = json.loads(c)
    k = "sk%d" % c["streamk"]
    if us < best.get((m, k), (1e9,))[0]: best[(m, k)] = (us, c)
cols = sorted({k for _, k in best})
print("%-5s %8s" % ("m", "cuBLAS") + "".join("%38s" % k for k in cols))
for m in sorted({m for m, _ in best}):
    cells = []
    for k in cols:
        if (m, k) not in best: cells.append("%38s" % "-"); continue
        us, c = best[(m, k)]
        tag = "%dx%d/%d c%d %s %s" % (c["bm"], c["bn"], c["stages"], c["consumers"], c["cluster"], c["schedule"][:4])
        cells.append("%8.2f %5.3f %23s" % (us, v.get(m, 0) / us, tag))
    print("%-5d %8.2f" % (m, v.get(m, float("nan"))) + "".join(cells))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt && rm -rf hw w.db*; ls
