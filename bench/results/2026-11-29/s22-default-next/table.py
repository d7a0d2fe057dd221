import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    d = json.loads(s); ven[(d["n"], d["m"], d["k"])] = us
rows = {}; bad = {}
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    d = json.loads(sh); c = json.loads(c)
    if st != 'ok': bad[st] = bad.get(st, 0) + 1; continue
    name = "%dx%d st%d pr%d %s w%d" % (c["bm"], c["bn"], c["stages"], c["producer_regs"], c["schedule"][:4], c.get("wstep", 0))
    rows.setdefault(name, {})[(d["n"], d["m"], d["k"])] = us
keys = sorted(ven)
print("not ok:", bad)
print("%-34s" % "config" + "".join("%11s" % ("%d/%d/%d" % (k[0] // 1024, k[1], k[2])) for k in keys))
print("%-34s" % "cuBLASLt" + "".join("%11.2f" % ven[k] for k in keys))
for name in sorted(rows, key=lambda n: rows[n].get(keys[-1], 1e9)):
    print("%-34s" % name + "".join("%11s" % ("%.2f" % rows[name][k] if k in rows[name] else "-") for k in keys))
print()
print("best per bm (us, x cuBLASLt = vendor / ours)")
for bm in (128, 192, 256):
    cells = []
    for k in keys:
        b = min(((r[k], n) for n, r in rows.items() if k in r and n.startswith("%dx" % bm)), default=None)
        cells.append("%7.2f %5.3f" % (b[0], ven[k] / b[0]) if b else "-")
    print("%-8d" % bm + "".join("%16s" % c for c in cells))
for k in keys:
    b = sorted(((r[k], n) for n, r in rows.items() if k in r))[:3]
    print("%d/%d/%d" % (k[0], k[1], k[2]), " | ".join("%s %.2f" % (n, t) for t, n in b))
