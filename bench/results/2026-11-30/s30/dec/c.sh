#!/usr/bin/env bash
# Session 30: 4096^2's decode sizes (issue 33's m <= 64 geomean 1.242 in call 1, bar 1.25): m = 33..63 run 11.0-11.2
# us with bn 64, csplit 2, m <= 15 10.2-10.4. Does the width compiled in cost where it is wider than m (a run-time
# width would then pay), or is it the split and the CTAs? Exhaustive over the decode kernel: bm 64/128, bn 24..64,
# csplit 1/2/4, kbox 1/2, 4-8 slots, evict 1 and l2pre 4 (the default's hints), at m = 17..63. The table: per m, the
# best time at each bn (us) and at each (bm, csplit). Predicted: at m = 33 and 40, bn 40 within 1% of bn 64 (the
# loads are m's rows either way; the wgmma work is not the bound). Carry ["build/aitune"]; about 1 minute.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
N=bench/results/2026-11-30/s30/dec
python3 bench/narrow.py $OUT/h swapab $N/sa.lua > /dev/null || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/h timeout 240 build/aitune sweep $N/w.yaml --db $OUT/w.db --vendor time --quiet > $OUT/w.txt 2> $OUT/w.err
echo "sweep exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/w.err
python3 - $OUT/w.db <<'PY' | tee $OUT/table.txt
import sqlite3, sys, json
db = sqlite3.connect(sys.argv[1]); v = {}
for sh, us in db.execute("select shape, median_us from vendor_times"): v[json.loads(sh)["m"]] = us
print("statuses:", db.execute("select status, count(*) from measurements group by status").fetchall())
R = []
for sh, us, c in db.execute("select shape, median_us, config from measurements where status = 'ok'"):
    R.append((json.loads(sh)["m"], us, json.loads(c)))
bns = sorted({c["bn"] for _, _, c in R}); pairs = sorted({(c["bm"], c["csplit"]) for _, _, c in R})
print("best us at each bn, then at each (bm, csplit); x = cuBLASLt / the best")
print("%-4s %7s %6s " % ("m", "cuBLAS", "x") + "".join("%7s" % ("bn%d" % b) for b in bns) + "".join("%8s" % ("%d/cs%d" % p) for p in pairs) + "  best")
for m in sorted({r[0] for r in R}):
    rs = [r for r in R if r[0] == m]; b = min(rs, key=lambda r: r[1])
    def best(f):
        t = [r[1] for r in rs if f(r[2])]
        return "%7.2f" % min(t) if t else "%7s" % "-"
    print("%-4d %7.2f %6.3f " % (m, v.get(m, 0), v.get(m, 0) / b[1]) + "".join(best(lambda c, x=x: c["bn"] == x) for x in bns) +
          "".join(" " + best(lambda c, p=p: (c["bm"], c["csplit"]) == p) for p in pairs) +
          "  bm%d bn%d cs%d kb%d st%d" % (b[2]["bm"], b[2]["bn"], b[2]["csplit"], b[2]["kbox"], b[2]["stages"]))
PY
cd $OUT && tar czf all.tgz w.db w.txt w.err table.txt && rm -rf h w.db*; ls
