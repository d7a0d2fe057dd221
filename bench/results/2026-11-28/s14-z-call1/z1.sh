#!/usr/bin/env bash
# Call 1 (s14): swapab's first mid-size kernel with a column tile's two tiles of rows neighbours along x
# (this tree) against along z (HEAD's templates, .gpu/old), the same narrowed space, same machine.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
unset AITUNE_HOME
t0=$(date +%s)
(cd .gpu/old && python3 ../../bench/narrow.py $OUT/ot swapab ../s14/spacez.lua) || exit 1
python3 bench/narrow.py $OUT/nt swapab .gpu/s14/spacez.lua || exit 1
for h in ot nt; do mkdir -p $OUT/$h/build && cp build/aitune $OUT/$h/build/; done
echo "gridDim.z in ot: $(grep -c gridDim.z $OUT/ot/templates/lib/swapab_mid.lua), nt: $(grep -c gridDim.z $OUT/nt/templates/lib/swapab_mid.lua)"
for v in old new; do
  timeout 260 $OUT/${v:0:1}t/build/aitune sweep .gpu/s14/probez.yaml --db $OUT/$v.db --vendor time --quiet > $OUT/$v.txt 2> $OUT/$v.err
  echo "$v exit $? at $(( $(date +%s) - t0 )) s"
done
python3 - $OUT/old.db $OUT/new.db <<'PY' 2> $OUT/ab_all.txt | tee $OUT/ab_table.txt
import sqlite3, sys, json
best = {}; ven = {}; bad = {}
for tag, path in (("old", sys.argv[1]), ("new", sys.argv[2])):
    con = sqlite3.connect(path)
    for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
        s = json.loads(sh); c = json.loads(c); key = (s["n"], s["k"], s["m"])
        if st != "ok": bad[tag] = bad.get(tag, 0) + 1; continue
        two = "z2" if s["m"] > c["bn"] else "z1"
        for p in (two, "all"):
            k2 = key + (tag, p)
            if k2 not in best or us < best[k2][0]: best[k2] = (us, c)
        print(tag, "%dx%d m=%d %.2f bm%d bn%d cs%d %s" % (s["n"], s["k"], s["m"], us, c["bm"], c["bn"], c["csplit"], two), file=sys.stderr)
    for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"):
        s = json.loads(sh); ven.setdefault((s["n"], s["k"], s["m"]), {})[tag] = us
print("not ok:", bad)
print("%11s %4s %7s | %7s %7s | %7s %7s | %6s %6s | %s" % ("weight", "m", "cuBLAS", "old z1", "old z2", "new z1", "new z2", "x old", "x new", "new best (bm bn cs)"))
for key in sorted(ven):
    v = ven[key].get("new") or ven[key].get("old")
    r = []
    for tag in ("old", "new"):
        for p in ("z1", "z2"):
            b = best.get(key + (tag, p)); r.append(b[0] if b else 0)
    xo = v / best[key + ("old", "all")][0] if key + ("old", "all") in best else 0
    xn = v / best[key + ("new", "all")][0] if key + ("new", "all") in best else 0
    c = best.get(key + ("new", "all"), (0, {}))[1]
    print("%5dx%5d %4d %7.2f | %7.2f %7.2f | %7.2f %7.2f | %6.3f %6.3f | %s" % ((key[0], key[1], key[2], v) + tuple(r) + (xo, xn,
          " ".join(str(c.get(x)) for x in ("bm", "bn", "csplit")))))
PY
rm -rf $OUT/ot $OUT/nt
