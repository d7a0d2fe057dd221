#!/usr/bin/env bash
# Probe 2: swapab's mid-size kernel, pdl 0 against 1 (and bm, csplit, stages), at 4 weights, m = 65, 129, 190.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
mkdir -p $OUT/h && cp -r templates search $OUT/h/ && python3 bench/narrow.py $OUT/h swapab .gpu/space2.lua || exit 1
AITUNE_HOME=$OUT/h timeout 400 build/aitune sweep .gpu/probe2.yaml --db $OUT/p2.db --vendor time --quiet > $OUT/p2.txt 2> $OUT/p2.err
echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
python3 - $OUT/p2.db <<'PY' 2> $OUT/p2_all.txt | tee $OUT/p2_table.txt
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
best = {}; ven = {}; bad = 0
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(sh); c = json.loads(c); key = (s["n"], s["k"], s["m"])
    if st != "ok": bad += 1; continue
    for tag in ("pdl%d" % c["pdl"], "all"):
        if key + (tag,) not in best or us < best[key + (tag,)][0]: best[key + (tag,)] = (us, c)
for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"):
    s = json.loads(sh); ven[(s["n"], s["k"], s["m"])] = us
print("not ok:", bad)
print("%11s %4s %7s %7s %7s %6s  %s" % ("weight", "m", "cuBLAS", "pdl0", "pdl1", "x", "best config (bm bn st cs pdl)"))
for key in sorted(ven):
    b0, b1, ba = best.get(key + ("pdl0",)), best.get(key + ("pdl1",)), best.get(key + ("all",))
    if not ba: continue
    c = ba[1]
    print("%5dx%5d %4d %7.2f %7.2f %7.2f %6.3f  %d %d %d %d %d" % (key[0], key[1], key[2], ven[key], b0[0] if b0 else 0, b1[0] if b1 else 0,
          ven[key] / ba[0], c["bm"], c["bn"], c["stages"], c["csplit"], c["pdl"]))
# per (weight, m): every config's time, for the landscape
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements order by shape, median_us"):
    s = json.loads(sh); c = json.loads(c)
    print("all %dx%d m=%d %s %.2f bm%d bn%d st%d cs%d pdl%d" % (s["n"], s["k"], s["m"], st, us or 0, c["bm"], c["bn"], c["stages"], c["csplit"], c["pdl"]), file=sys.stderr)
PY
rm -rf $OUT/h
