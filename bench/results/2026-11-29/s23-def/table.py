"""table.py DB OLD.tsv NEW.tsv: at each shape, the old default's time (lib/wgmma_default.lua before 64 x 192 joined
its wave tiles), the new one's, the best of the narrowed space, and cuBLASLt."""
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven, t = {}, {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    d = json.loads(s); ven[(d["m"], d["n"], d["k"])] = us
for sh, us, c in con.execute("select shape, median_us, config from measurements where status='ok'"):
    d = json.loads(sh); t.setdefault((d["m"], d["n"], d["k"]), {})[json.dumps(json.loads(c), sort_keys=True, separators=(",", ":"))] = us
def load(p):
    r = {}
    for line in open(p):
        f = line.rstrip("\n").split("\t"); m, n, k = map(int, f[2].split(",")); r[(m, n, k)] = f[4]
    return r
old, new = load(sys.argv[2]), load(sys.argv[3])
print("%-16s %8s %8s %8s %8s %7s %7s" % ("m,n,k", "vendor", "old def", "new def", "best", "new/old", "x v new"))
for key in sorted(t):
    o, n = t[key].get(old.get(key)), t[key].get(new.get(key))
    b = min(t[key].values()); v = ven.get(key, float("nan"))
    f = lambda x: "%8.2f" % x if x else "%8s" % "-"
    print("%-16s %8.2f %s %s %8.2f %7s %7s" % ("%d,%d,%d" % key, v, f(o), f(n), b, "%.3f" % (n / o) if o and n else "-", "%.3f" % (v / n) if n else "-"))
