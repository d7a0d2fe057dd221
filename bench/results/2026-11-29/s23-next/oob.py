"""oob.py DB: the swapped 64 x 192 tile's time at each m, fixed width (wstep 0: the second tile's B box is 192 rows,
384 - m of them past m, zero-filled by TMA) and run-time width (wstep 16: two tiles of the narrowest width that
holds m, at most 15 rows past it), and cuBLASLt's."""
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven, t = {}, {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    ven[json.loads(s)["m"]] = us
for sh, us, c in con.execute("select shape, median_us, config from measurements where status='ok'"):
    t.setdefault(json.loads(sh)["m"], {})[json.loads(c).get("wstep", 0)] = us
print("%6s %9s %10s %12s %10s %9s" % ("m", "rows past", "wstep 0", "w16 (width)", "wstep 16", "cuBLASLt"))
for m in sorted(t):
    w = next(x for x in range(128, 193, 16) if 2 * x >= m)
    print("%6d %9d %10.2f %12s %10.2f %9.2f" % (m, 384 - m, t[m].get(0, 0), "%d" % w, t[m].get(16, 0), ven.get(m, 0)))
