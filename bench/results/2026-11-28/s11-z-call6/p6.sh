#!/usr/bin/env bash
# Call 6: swapab's first mid-size kernel with rows split over z tiles (m up to 2 bn) against one tile (m <= bn),
# narrowed space, 4 weights, m = 129, 190, 255; compute-sanitizer over z-split configs at an odd shape; the decode
# families at 14336 x 4096 (m = 2, 8, 16, 48; random 30 a template).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
python3 bench/narrow.py $OUT/h4 swapab .gpu/space4.lua && python3 bench/narrow.py $OUT/h4s swapab .gpu/space4s.lua || exit 1
AITUNE_HOME=$OUT/h4 timeout 200 build/aitune sweep .gpu/probe4.yaml --db $OUT/z.db --vendor time --quiet > $OUT/z.txt 2> $OUT/z.err
echo "z exit $? at $(( $(date +%s) - t0 )) s"
AITUNE_HOME=$OUT/h4s SANITIZE_SPEC=.gpu/san4.yaml SANITIZE_ARGS="--vendor off" timeout 150 tests/gpu/sanitize.sh $OUT/san | tail -3
echo "san at $(( $(date +%s) - t0 )) s"
timeout 150 build/aitune sweep .gpu/dec14.yaml --db $OUT/d.db --vendor time --quiet > $OUT/d.txt 2> $OUT/d.err
echo "dec exit $? at $(( $(date +%s) - t0 )) s"
python3 - $OUT/z.db $OUT/d.db <<'PY' 2> $OUT/z_all.txt | tee $OUT/z_table.txt
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
best = {}; ven = {}; bad = 0
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    s = json.loads(sh); c = json.loads(c); key = (s["n"], s["k"], s["m"])
    if st != "ok": bad += 1; continue
    z = -(-s["m"] // c["bn"])
    k2 = key + (z,)
    if k2 not in best or us < best[k2][0]: best[k2] = (us, c)
    print("%dx%d m=%d z%d %.2f bn%d st%d cs%d" % (s["n"], s["k"], s["m"], z, us, c["bn"], c["stages"], c["csplit"]), file=sys.stderr)
for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"):
    s = json.loads(sh); ven[(s["n"], s["k"], s["m"])] = us
print("not ok:", bad)
print("%11s %4s %7s | %7s %6s %-10s | %7s %6s %-10s" % ("weight", "m", "cuBLAS", "z1", "x", "bn st cs", "z2", "x", "bn st cs"))
for key in sorted(ven):
    r = []
    for z in (1, 2):
        b = best.get(key + (z,))
        r += [b[0], ven[key] / b[0], "%d %d %d" % (b[1]["bn"], b[1]["stages"], b[1]["csplit"])] if b else [0, 0, "-"]
    print("%5dx%5d %4d %7.2f | %7.2f %6.3f %-10s | %7.2f %6.3f %-10s" % ((key[0], key[1], key[2], ven[key]) + tuple(r)))
con = sqlite3.connect(sys.argv[2])
best = {}; ven = {}
for sh, st, us, t, c in con.execute("select shape, status, median_us, template, config from measurements"):
    if st != "ok": continue
    m = json.loads(sh)["m"]
    if (m, t) not in best or us < best[(m, t)][0]: best[(m, t)] = (us, c)
for sh, us in con.execute("select shape, median_us from vendor_times where status = 'ok'"): ven[json.loads(sh)["m"]] = us
print("14336x4096 decode: m, cuBLAS, then each family's best (us, GB/s of the weight)")
for m in sorted(ven):
    print(m, "%.2f" % ven[m], " ".join("%s %.2f (%.0f) %s" % (t.split("/")[1], b[0], 14336 * 4096 * 2 / b[0] / 1e3, b[1]) for (mm, t), b in sorted(best.items()) if mm == m))
PY
rm -rf $OUT/h4 $OUT/h4s
