#!/usr/bin/env bash
# Session 26: swapab's mid-size kernel at widths between its steps of 32 (bn 200, 208, 216, 232, 240, 248: any
# multiple of 8 is a wgmma width). cuBLASLt runs 14336 x 4096 at m = 129..233 with 128 x round8(m) tiles (one wave
# of 112); swapab's 128 x 224 at m = 193 runs as many flops a second on its 224 columns as cuBLASLt on its 200, so
# a 200-wide tile should take 224/200 less: predicted 0.97-1.02x cuBLASLt at each m with the width round8(m).
# compute-sanitizer first over bn 200 and 232 (n = 4100: a ragged last weight tile). Exhaustive over bm 128,
# bn 192..256 step 8, stages 4/5 at m = 193..255 (w.yaml), x cuBLASLt. Run from the tree's root, carry
# ["build/aitune"]; about 2 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s26/widths
python3 bench/narrow.py $OUT/hs swapab $N/san.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/hs SANITIZE_SPEC=$N/san.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san > $OUT/san.log 2>&1
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.log
python3 bench/narrow.py $OUT/h swapab $N/sa.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 200 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
best = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    m = json.loads(sh)["m"]; c = json.loads(c)
    if us < best.get((m, c["bn"]), (1e9,))[0]: best[(m, c["bn"])] = (us, c)
bns = sorted({b for _, b in best})
print("%-5s %8s" % ("m", "cuBLAS") + "".join("%13s" % ("bn %d" % b) for b in bns))
for m in sorted({m for m, _ in best}):
    print("%-5d %8.2f" % (m, v.get(m, float("nan"))) + "".join(
        "%7.2f %5.3f" % (best[(m, b)][0], v.get(m, 0) / best[(m, b)][0]) if (m, b) in best else "%13s" % "-" for b in bns))
PY
sqlite3 $OUT/w.db "select status, count(*) from measurements group by 1"
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt san.log san && rm -rf h hs san w.db*; ls
