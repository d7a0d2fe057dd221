#!/usr/bin/env bash
# Session 29: the even split (wgmma streamk 2: the tail's k-tiles in equal ranges over every SM) checked
# under compute-sanitizer on small ragged shapes, then raced at 14336 x 4096, m = 72..255, against streamk 0,
# swapab's mid-size kernel (one tile of 128 weight rows a CTA: 112 CTAs on 132 SMs) and cuBLASLt.
# Predicted: streamk 2 bn 128 at m = 72..160 near the copy ceiling (~30 us, 1.1x cuBLASLt's 33-35), where
# swapab's 112 CTAs stream at 3.4-3.6 TB/s; at 200..255 (compute-bound) no gain. Carry ["build/aitune"].
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s29/sk2
python3 bench/narrow.py $OUT/hs wgmma $N/san.lua > /dev/null || exit 1
python3 bench/narrow.py $OUT/hw swapab $N/sa.lua wgmma $N/wg.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/hs timeout 200 compute-sanitizer --tool memcheck --print-limit 20 build/aitune sweep $N/san.yaml \
  --db $OUT/s.db --timeout 120s --quiet --vendor off > $OUT/san.txt 2>&1
rc=$?
errs=$(grep -o "ERROR SUMMARY: [0-9]*" $OUT/san.txt | awk '{ s += $3 } END { print s + 0 }')
echo "sanitizer: exit $rc, $errs errors, $(( $(date +%s) - t0 )) s"
python3 tests/gpu/verdict.py $OUT/s.db "$rc" "compute-sanitizer memcheck" --sanitizer-errors "$errs" | tail -3
python3 - $OUT/s.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("sanitize statuses:", db.execute("select status, count(*) from measurements group by status").fetchall())
print("streamk 2 ok:", db.execute("select count(*) from measurements where status='ok' and config like '%\"streamk\":2%'").fetchone())
PY
t0=$(date +%s)
AITUNE_HOME=$OUT/hw timeout 240 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
print("statuses:", db.execute("select status, count(*) from measurements group by status").fetchall())
best = {}
for sh, us, t, c in db.execute("select shape, median_us, template, config from measurements where status = 'ok'"):
    m = json.loads(sh)["m"]; c = json.loads(c)
    k = "swapab" if t.endswith("swapab") else "wgmma sk%d" % c["streamk"]
    if us < best.get((m, k), (1e9,))[0]: best[(m, k)] = (us, c)
cols = sorted({k for _, k in best})
print("%-5s %8s" % ("m", "cuBLAS") + "".join("%30s" % k for k in cols))
for m in sorted({m for m, _ in best}):
    cells = []
    for k in cols:
        if (m, k) not in best: cells.append("%30s" % "-"); continue
        us, c = best[(m, k)]
        tag = "%dx%d/%d" % (c["bm"], c["bn"], c["stages"]) + (" %s %s %s" % (c["cluster"], c["schedule"][:4], c["epilogue"][:3]) if "cluster" in c else " mc%d" % c["mc"])
        cells.append("%7.2f %5.3f %16s" % (us, v.get(m, 0) / us, tag))
    print("%-5d %8.2f" % (m, v.get(m, float("nan"))) + "".join(cells))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt san.txt s.db && rm -rf hs hw w.db* s.db*; ls
