"""Each shape's default, old templates against the patched ones (pingdefault.patch),
from the two sweeps' measurements (old.db, new.db: call 6's res.tgz) and the
defaults kernel_sample lists for def.yaml with each tree (def_old.tsv,
def_new.tsv: `build/tests/kernel_sample list -n 0 def.yaml | cut -f3,5`)."""
import json, math, sqlite3, sys


def defs(p):
    out = {}
    for line in open(p):
        sh, c = line.rstrip("\n").split("\t")
        m, n, k = map(int, sh.split(","))
        out[(n, m)] = json.loads(c)
    return out


def meas(db):
    con = sqlite3.connect(db)
    ven, got = {}, {}
    for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
        d = json.loads(s)
        ven[(d["n"], d["m"])] = us
    for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
        d = json.loads(sh)
        got.setdefault((d["n"], d["m"]), []).append((json.loads(c), us))
    return ven, got


def main(old_db, new_db, old_tsv, new_tsv):
    do, dn = defs(old_tsv), defs(new_tsv)
    vo, mo = meas(old_db)
    vn, mn = meas(new_db)
    pick = lambda ms, cfg: next(us for c, us in ms if c == cfg)
    name = lambda c: "%dx%d %s w%d" % (c["bm"], c["bn"], c["schedule"][:4], c["wstep"])
    print("%-11s %12s %8s %-18s %8s %-18s %6s %6s %7s" % ("n/m", "vendor o/n", "old us", "old default", "new us",
                                                          "new default", "x old", "x new", "new/old"))
    lo, ln, r = [], [], []
    for k in sorted(do):
        o, n = pick(mo[k], do[k]), pick(mn[k], dn[k])
        print("%-11s %12s %8.2f %-18s %8.2f %-18s %6.3f %6.3f %7.3f" % ("%d/%d" % k, "%.1f/%.1f" % (vo[k], vn[k]), o,
              name(do[k]), n, name(dn[k]), vo[k] / o, vn[k] / n, o / n))
        lo.append(vo[k] / o); ln.append(vn[k] / n); r.append(o / n)
    g = lambda x: math.exp(sum(map(math.log, x)) / len(x))
    print("geomean x vendor: old %.3f new %.3f; worst old %.3f new %.3f; geomean new/old %.3f" % (g(lo), g(ln), min(lo), min(ln), g(r)))


if __name__ == "__main__":
    main(*sys.argv[1:5])
