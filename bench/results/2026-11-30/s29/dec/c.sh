#!/usr/bin/env bash
# Session 29: 4096 x 4096's decode sizes (m = 8..63), issue 33's m <= 64 bar (geomean 1.200 in s29 call 4 against
# 1.25). The range sweep's winners run 10.1-10.4 us at m <= 15 (bn 8/16, csplit 1, kbox 4, l2pre 4, evict 1) and
# 11.3-11.9 at m = 16..63 (bn 32/64, csplit 2, kbox 2/1, l2pre 0, evict 0). Exhaustive over the decode kernel's
# bn 16..64 x stages x csplit 1/2 x l2pre x kbox x evict at m = 8..63, each against cuBLASLt and the sweep's
# winners. Predicted: kbox 4 / l2pre 4 / evict 1 at bn 32..64 within 3% of 10.4 us where shared memory holds 4+
# slots. Carry ["build/aitune"]; about 2 minutes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s29/dec
python3 bench/narrow.py $OUT/h swapab $N/sa.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 300 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
print("statuses:", db.execute("select status, count(*) from measurements group by status").fetchall())
won = {"s29 bn32 cs2 kb2 l0 ev0 st8": dict(bn=32, csplit=2, kbox=2, l2pre=0, evict=0, stages=8),
       "s29 bn64 cs2 kb1 l0 ev0 st8": dict(bn=64, csplit=2, kbox=1, l2pre=0, evict=0, stages=8)}
rows = {}
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    rows.setdefault(json.loads(sh)["m"], []).append((us, json.loads(c)))
def tag(c): return "bn%d cs%d kb%d l%d ev%d st%d" % (c["bn"], c["csplit"], c["kbox"], c["l2pre"], c["evict"], c["stages"])
print("%-4s %8s  %-36s %-36s %s" % ("m", "cuBLAS", "best (us, x vendor)", "best kbox<4 or l2pre 0", "s29 winners"))
for m in sorted(rows):
    r = sorted(rows[m], key=lambda x: x[0]); b = r[0]
    alt = [x for x in r if x[1]["kbox"] < 4 or x[1]["l2pre"] == 0][0]
    ws = []
    for name, w in won.items():
        hit = [x for x in r if all(x[1][k] == w[k] for k in w)]
        if hit: ws.append("%s %.2f" % (name[4:8], min(h[0] for h in hit)))
    print("%-4d %8.2f  %6.2f %5.3f %-23s %6.2f %5.3f %-23s %s" % (m, v.get(m, 0), b[0], v.get(m, 0) / b[0], tag(b[1]), alt[0], v.get(m, 0) / alt[0], tag(alt[1]), "; ".join(ws)))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt && rm -rf h w.db*; ls
