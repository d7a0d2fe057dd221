"""cmp.py OLD.db NEW.db: per shape, cuBLASLt (both runs), the best config of each, and the geomean over the
configs both measured of new/old time (below 1: the new tree faster)."""
import sqlite3, sys, json, math
def load(p):
    con = sqlite3.connect(p); ven = {}; rows = {}
    for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
        d = json.loads(s); ven[(d["n"], d["m"], d["k"])] = us
    for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements where status='ok'"):
        d = json.loads(sh); rows.setdefault((d["n"], d["m"], d["k"]), {})[c] = us
    return ven, rows
vo, ro = load(sys.argv[1]); vn, rn = load(sys.argv[2])
print("%-18s %9s %9s %9s %6s %9s %6s %7s %4s" % ("n/m/k", "vend o", "vend n", "best o", "x v", "best n", "x v", "geo n/o", "cfgs"))
for k in sorted(set(ro) | set(rn)):
    a, b = ro.get(k, {}), rn.get(k, {})
    both = [c for c in a if c in b]
    geo = math.exp(sum(math.log(b[c] / a[c]) for c in both) / len(both)) if both else float("nan")
    bo = min(a.values()) if a else float("nan"); bn = min(b.values()) if b else float("nan")
    print("%-18s %9.2f %9.2f %9.2f %6.3f %9.2f %6.3f %7.3f %4d" % ("%d/%d/%d" % k, vo.get(k, 0), vn.get(k, 0), bo,
          vo.get(k, 0) / bo, bn, vn.get(k, 0) / bn, geo, len(both)))
