#!/usr/bin/env bash
# Call 2 (s14): this tree's swapab mid-size kernel, a wider narrowed space at 14336 x 4096, m = 129, 200, 255.
set -u
unset AITUNE_HOME
python3 bench/narrow.py $OUT/nt swapab .gpu/s14/spacez2.lua || exit 1
mkdir -p $OUT/nt/build && cp build/aitune $OUT/nt/build/
timeout 400 $OUT/nt/build/aitune sweep .gpu/s14/probez2.yaml --db $OUT/new.db --vendor time --quiet > $OUT/new.txt 2> $OUT/new.err
echo "exit $?"
python3 - $OUT/new.db <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {json.loads(s)["m"]: us for s, us in con.execute("select shape, median_us from vendor_times where status='ok'")}
rows = []
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(sh); c = json.loads(c)
    if st != "ok": print("bad", st, c); continue
    rows.append((s["m"], us, c))
rows.sort(key=lambda r: (r[0], r[1]))
for m in sorted(ven):
    print("m=%d cuBLAS %.2f" % (m, ven[m]))
    for r in [x for x in rows if x[0] == m][:8]:
        c = r[2]; print("   %.2f x%.3f bm%d bn%d st%d cs%d inf%d kbox%d" % (r[1], ven[m] / r[1], c["bm"], c["bn"], c["stages"], c["csplit"], c["inflight"], c["kbox"]))
PY
rm -rf $OUT/nt
