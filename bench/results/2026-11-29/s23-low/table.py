"""table.py DB: per shape, cuBLASLt and the best config of each (family, stream-K, bm) with x cuBLASLt."""
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    d = json.loads(s); ven[(d["n"], d["m"], d["k"])] = us
best = {}; bad = {}
for sh, st, us, c, tp in con.execute("select shape, status, median_us, config, template from measurements"):
    d = json.loads(sh); c = json.loads(c); key = (d["n"], d["m"], d["k"])
    if st != "ok": bad[st] = bad.get(st, 0) + 1; continue
    fam = "%s sk%d bm%d" % (tp.split("/")[1], c["streamk"], c["bm"])
    name = "%dx%d c%d st%d %s %s %s" % (c["bm"], c["bn"], c["consumers"], c["stages"], c["cluster"], c["schedule"][:4], c["epilogue"])
    if us < best.setdefault(key, {}).get(fam, (1e9,))[0]: best[key][fam] = (us, name)
print("not ok:", bad)
for key in sorted(best):
    v = ven.get(key, float("nan"))
    print("%d x %d (k %d): cuBLASLt %.2f us" % (key[0], key[1], key[2], v))
    for fam, (us, name) in sorted(best[key].items(), key=lambda x: x[1][0]):
        print("   %-24s %8.2f  %.3f  %s" % (fam, us, v / us, name))
