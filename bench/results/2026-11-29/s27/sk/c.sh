#!/usr/bin/env bash
# streamk.patch (the kernel, with the streamk 2 probe) applies to 78a37cc: git checkout 78a37cc -- templates && git apply streamk.patch.
# Session 27, calls 2-4 and 9-13 (call 2: the adding one chunk at a time, call2/; call 3: loads in flight, call3/; call 4: the weight evict_first in L2, bm 64 too, call4/): swapab's first mid-size kernel with stream-K (streamk 1: a persistent grid of one worker an
# SM sharing every unit's slots of k evenly, pieces met in the workspace). At 14336 x 4096 its 112 column tiles of
# 128 keep 112 of 132 SMs streaming the weight: cuBLASLt's 128 x round8(m) tiles too (s26/widths), at 3.4 TB/s
# where rowdot's 132 SMs reach 4.0. Predicted: stream-K 1.08-1.15x over streamk 0 at m = 136..208 (the weight's
# stream), less at 224..256 (the tensor cores); against cuBLASLt 1.00-1.08x there. compute-sanitizer first over
# streamk configs (n = 4100, m = 229 in calls 2-3; from call 12 n = 9000: 71 units of 128 over 132 workers, two or three pieces a unit), then exhaustive over bm 128,
# bn 144..256, streamk 0/1, pdl 0/1 at m = 136..256 (w.yaml) x cuBLASLt. Run from the tree's root, carry
# ["build/aitune"]; about 3 minutes. SPACE and SPEC name another space and spec in this folder (call 9: sb.lua, wb.yaml:
# streamk 2, a probe, runs the stream-K kernel with one worker a unit, no pieces; stages 4 and 6).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-29/s27/sk
mkdir -p $OUT/san; : > $OUT/san.log
if [ -z "${NOSAN:-}" ]; then   # NOSAN=1: timing only (call 4, after calls 2-3 passed it)
  python3 bench/narrow.py $OUT/hs swapab $N/san.lua > /dev/null || exit 1
  t0=$(date +%s)
  AITUNE_HOME=$OUT/hs SANITIZE_SPEC=$N/san.yaml SANITIZE_ARGS="--vendor off" timeout 120 tests/gpu/sanitize.sh $OUT/san > $OUT/san.log 2>&1
  echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/san.log
fi
python3 bench/narrow.py $OUT/h swapab $N/${SPACE:-sa.lua} > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 240 build/aitune sweep $N/${SPEC:-w.yaml} --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -3 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
best = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    m = json.loads(sh)["m"]; c = json.loads(c); key = (m, "bm%d st%d sk%d pdl%d" % (c["bm"], c["stages"], c["streamk"], c["pdl"]))
    if us < best.get(key, (1e9,))[0]: best[key] = (us, c["bn"])
cols = sorted({k for _, k in best})
print("%-5s %8s" % ("m", "cuBLAS") + "".join("%24s" % k for k in cols))
for m in sorted({m for m, _ in best}):
    print("%-5d %8.2f" % (m, v.get(m, float("nan"))) + "".join(
        "%7.2f %5.3f bn%4d  " % (best[(m, k)][0], v.get(m, 0) / best[(m, k)][0], best[(m, k)][1]) if (m, k) in best else "%24s" % "-" for k in cols))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt san.log san && rm -rf h hs san w.db*; ls
