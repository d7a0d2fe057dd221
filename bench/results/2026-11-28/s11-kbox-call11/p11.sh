#!/usr/bin/env bash
# Call 11: swapab's decode default (by_cover's bm and csplit, 8 slots, kbox 1) against the same with kbox 2 and with
# 12 slots, at 4 weights and m = 2, 8, 24, 48 (every config of a narrowed space verified and timed, stream timing).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
python3 bench/narrow.py $OUT/h11 swapab .gpu/space11.lua || exit 1
AITUNE_HOME=$OUT/h11 timeout 240 build/aitune sweep .gpu/probe11.yaml --db $OUT/d11.db --vendor time --quiet > $OUT/d11.txt 2> $OUT/d11.err
echo "sweep exit $? at $(( $(date +%s) - t0 )) s"
python3 - $OUT/d11.db .gpu/defaults11.tsv <<'PY' | tee $OUT/d11_table.txt
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
t = {}; ven = {}; bad = 0
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(sh); c = json.loads(c)
    if st != "ok": bad += 1; continue
    key = (s["n"], s["k"], s["m"])
    t[key + (json.dumps(c, sort_keys=True),)] = us
for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"):
    s = json.loads(sh); ven[(s["n"], s["k"], s["m"])] = us
defs = {}
for line in open(sys.argv[2]):
    shp, cfg = line.rstrip("\n").split("\t"); m, n, k = map(int, shp.split(",")); defs[(n, k, m)] = json.loads(cfg)
print("not ok:", bad)
print("%11s %3s %7s | %-14s %7s | %7s %7s %7s | %7s %s" % ("weight", "m", "cuBLAS", "default bm/cs", "def", "kbox2", "st12", "both", "best", "best config"))
for key in sorted(ven):
    d = defs.get(key)
    def get(**ch):
        c = dict(d); c.update(ch); return t.get(key + (json.dumps(c, sort_keys=True),), 0)
    cand = [(us, cfg) for kk, us in t.items() if kk[:3] == key for cfg in [kk[3]]]
    bu, bc = min(cand)
    bc = json.loads(bc)
    print("%5dx%5d %3d %7.2f | bm%d cs%d bn%d %7.2f | %7.2f %7.2f %7.2f | %7.2f bm%d bn%d cs%d st%d kbox%d" % (key[0], key[1], key[2], ven[key],
          d["bm"], d["csplit"], d["bn"], get(), get(kbox=2), get(stages=12), get(kbox=2, stages=12), bu, bc["bm"], bc["bn"], bc["csplit"], bc["stages"], bc["kbox"]))
PY
rm -rf $OUT/h11
