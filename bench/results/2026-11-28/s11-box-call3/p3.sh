#!/usr/bin/env bash
# Call 3: swapab's A box (min(bn, round8(m)) rows, this tree) against HEAD's (bn rows), same machine, the same
# narrowed space (bm 64/128, bn 64..256, stages 4/6, csplit 1/2/4, pdl 0/1) at 4 weights, m = 65, 129, 190.
# HEAD's templates run from a copy of the tree ($OUT/ot: templates, search, build/aitune), found as a build tree.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "AITUNE_HOME='${AITUNE_HOME:-}'; share: $(ls -d share 2>&1 | head -1); cwd $PWD"
unset AITUNE_HOME
t0=$(date +%s)
(cd .gpu/old && python3 ../../bench/narrow.py $OUT/ot swapab ../space2.lua) || exit 1
python3 bench/narrow.py $OUT/nt swapab .gpu/space2.lua || exit 1
for h in ot nt; do mkdir -p $OUT/$h/build && cp build/aitune $OUT/$h/build/; done
echo "slot_bytes in ot: $(grep -c slot_bytes $OUT/ot/templates/lib/swapab.lua), nt: $(grep -c slot_bytes $OUT/nt/templates/lib/swapab.lua)"
for v in old new; do
  timeout 200 $OUT/${v:0:1}t/build/aitune sweep .gpu/probe2.yaml --db $OUT/$v.db --vendor time --quiet > $OUT/$v.txt 2> $OUT/$v.err
  echo "$v exit $? at $(( $(date +%s) - t0 )) s"
done
python3 - $OUT/old.db $OUT/new.db <<'PY' 2> $OUT/ab_all.txt | tee $OUT/ab_table.txt
import sqlite3, sys, json
best = {}; ven = {}; bad = {}; slot = {}
for tag, path in (("old", sys.argv[1]), ("new", sys.argv[2])):
    con = sqlite3.connect(path)
    src = dict(con.execute("select hash, source from cubins"))
    nb = sum('slot_bytes' in (s or '') for s in src.values())
    print(tag, "kernels with slot_bytes:", nb, "of", len(src))
    for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
        s = json.loads(sh); c = json.loads(c); key = (s["n"], s["k"], s["m"])
        if st != "ok": bad[tag] = bad.get(tag, 0) + 1; continue
        for p in ("pdl%d" % c["pdl"], "all"):
            k2 = key + (tag, p)
            if k2 not in best or us < best[k2][0]: best[k2] = (us, c)
        print(tag, "%dx%d m=%d %.2f bm%d bn%d st%d cs%d pdl%d" % (s["n"], s["k"], s["m"], us, c["bm"], c["bn"], c["stages"], c["csplit"], c["pdl"]), file=sys.stderr)
    for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"):
        s = json.loads(sh); ven.setdefault((s["n"], s["k"], s["m"]), {})[tag] = us
print("not ok:", bad)
print("%11s %4s %7s | %7s %7s %6s | %7s %7s %6s | %s" % ("weight", "m", "cuBLAS", "old p0", "old p1", "x", "new p0", "new p1", "x", "new best (bm bn st cs pdl)"))
for key in sorted(ven):
    v = ven[key].get("new") or ven[key].get("old")
    r = []
    for tag in ("old", "new"):
        b0, b1, ba = (best.get(key + (tag, p)) for p in ("pdl0", "pdl1", "all"))
        r += [b0[0] if b0 else 0, b1[0] if b1 else 0, v / ba[0] if ba else 0]
    c = best.get(key + ("new", "all"), (0, {}))[1]
    print("%5dx%5d %4d %7.2f | %7.2f %7.2f %6.3f | %7.2f %7.2f %6.3f | %s" % ((key[0], key[1], key[2], v) + tuple(r) +
          (" ".join(str(c.get(x)) for x in ("bm", "bn", "stages", "csplit", "pdl")),)))
PY
rm -rf $OUT/ot $OUT/nt
