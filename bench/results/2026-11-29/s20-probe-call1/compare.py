"""Call 1's comparison: at each size that both sweeps raced (their searches'
sizes and hold's probes), the fastest candidate of the wstep 16 space and of
the wstep 0 space, each over cuBLASLt timed in its own sweep.
    python3 compare.py RUN.db FIXED.db  (the call's run.db.gz and fixed.db.gz,
    with the -wal files of res.tgz beside them; not kept: 1.4 MB)"""
import json, math, sqlite3, sys
def load(p):
    con = sqlite3.connect(p)
    ven = {}
    for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
        d = json.loads(s); ven[(d['n'], d['m'])] = us
    best = {}
    for s, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
        if st != 'ok': continue
        d = json.loads(s); k = (d['n'], d['m'])
        if k not in best or us < best[k][0]: best[k] = (us, json.loads(c))
    return ven, best
vr, br = load(sys.argv[1]); vf, bf = load(sys.argv[2])
la, lb = [], []
for k in sorted(set(br) & set(bf)):
    a, b = br[k], bf[k]; ra, rb = vr[k] / a[0], vf[k] / b[0]
    la.append(math.log(ra)); lb.append(math.log(rb))
    print("n=%5d m=%5d  wstep 16: x%.3f (bm %d, bn %d)  |  wstep 0: x%.3f (bm %d, bn %d)" % (k[0], k[1], ra, a[1]['bm'], a[1]['bn'], rb, b[1]['bm'], b[1]['bn']))
print("geomean: wstep 16 %.3f, wstep 0 %.3f" % (math.exp(sum(la) / len(la)), math.exp(sum(lb) / len(lb))))
