#!/usr/bin/env bash
# Prepared in session 27 for the next: cuBLASLt runs 14336 x 4096 at m = 129..233 with
# nvjet_sm90_tst_128x200_64x5_4x1_v_bz_coopA_TNT-like kernels (s17-ncu-call5 at m = 200: 128-row tiles, 5 slots of
# k 64, two consumer warpgroups, a 4x1 cluster, 112 CTAs), at 47.0 us where swapab's first mid-size kernel took
# 55.1 with L2 hit 44% against 24% and 1.7x the issue slots: A read from L2 by each of the 112 CTAs. swapab's
# second mid-size kernel multicasts A to mc column tiles of a cluster (mc 2, 4), measured last on an H100 before
# its arrive-scope fix. Exhaustive at one tile of rows: bm 128, bn 136..248, 4 or 5 slots, mc 0 (first kernel),
# 1, 2, 4, evict 0/1, pdl on, x cuBLASLt. Predicted: mc 4 within 3% of cuBLASLt at m = 136..224 if A's L2 reads
# are the gap. compute-sanitizer first over mc 2 and 4 (n = 9000: a ragged last group). Run from the tree's
# root, carry ["build/aitune"]; about 3 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s27/mc
python3 bench/narrow.py $OUT/hs swapab $N/san.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/hs SANITIZE_SPEC=$N/san.yaml SANITIZE_ARGS="--vendor off" timeout 120 tests/gpu/sanitize.sh $OUT/san > $OUT/san.log 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/san.log
python3 bench/narrow.py $OUT/h swapab $N/sa.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 300 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
best = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    m = json.loads(sh)["m"]; c = json.loads(c); key = (m, "mc%d ev%d" % (c["mc"], c["evict"]))
    if us < best.get(key, (1e9,))[0]: best[key] = (us, c["bn"], c["stages"])
cols = sorted({k for _, k in best})
print("%-5s %8s" % ("m", "cuBLAS") + "".join("%22s" % k for k in cols))
for m in sorted({m for m, _ in best}):
    print("%-5d %8.2f" % (m, v.get(m, float("nan"))) + "".join(
        "%7.2f %5.3f b%3d/%d" % (best[(m, k)][0], v.get(m, 0) / best[(m, k)][0], best[(m, k)][1], best[(m, k)][2])
        if (m, k) in best else "%22s" % "-" for k in cols))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt san.log san && rm -rf h hs san w.db*; ls
