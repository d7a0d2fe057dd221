#!/usr/bin/env bash
# Prepared in session 28 for the next: 14336 x 4096's part [216, 256), row 1's worst (0.889 at m = 253 in s28 call
# 6), held by wgmma (128 x 128 in call 5, 128 x 224 in a 2x1 cluster in call 6) where swapab's one tile of rows at
# m's width ran 1.00-1.16x cuBLASLt at m = 216..248 alone (s26 call 6, s28 call 1). The part's probes are m = 216
# (or 224) and 255, and at 255 cuBLASLt has changed kernel (from m = 249) and leads every slot by 10-16%, so the race
# is decided there. Exhaustive at m = 216, 224, 232, 241, 248, 249, 255: swapab bm 128 at each width 216..256 (one
# width, nvar 1) and spans (bn 256, nvar 5, equal steps or steps of 8), 4 or 5 slots, evict 0/1, l2pre 0/2; wgmma
# bm 128, bn 128/224/256, 1x1 or 2x1 clusters, 4-6 slots; x cuBLASLt. Predicted: the spans within 3% of the exact
# widths at 216..248 and 1-4% behind wgmma's best at 249 and 255; if so, the part wants a cut at 249 (the vendor's
# step) or a choice that weighs its interior, not a faster kernel. Run from the tree's root, carry
# ["build/aitune"]; about 3 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s28/edge
python3 bench/narrow.py $OUT/h swapab $N/sa.lua wgmma $N/wg.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 400 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
best = {}
for sh, us, t, c in db.execute("select shape, median_us, template, config from measurements where status = 'ok'"):
    m = json.loads(sh)["m"]; c = json.loads(c)
    if t.endswith("swapab"): k = "swapab one width" if c["nvar"] == 1 else "swapab 5 widths w%d" % c["wstep"]
    else: k = "wgmma"
    if us < best.get((m, k), (1e9,))[0]: best[(m, k)] = (us, c)
cols = sorted({k for _, k in best})
print("%-5s %8s" % ("m", "cuBLAS") + "".join("%26s" % k for k in cols))
for m in sorted({m for m, _ in best}):
    cells = []
    for k in cols:
        if (m, k) not in best: cells.append("%26s" % "-"); continue
        us, c = best[(m, k)]
        tag = "b%d/%d" % (c["bn"], c["stages"]) + (" %s" % c["cluster"] if "cluster" in c else " ev%d l%d" % (c["evict"], c["l2pre"]))
        cells.append("%7.2f %5.3f %12s" % (us, v.get(m, 0) / us, tag))
    print("%-5d %8.2f" % (m, v.get(m, float("nan"))) + "".join(cells))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt && rm -rf h w.db*; ls
