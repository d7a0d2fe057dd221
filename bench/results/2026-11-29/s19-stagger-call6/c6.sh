#!/usr/bin/env bash
# Session 19, call 6: wgmma stream-K 0/1/2 (2: the tail pieces of even index run first, before the data-parallel units) at row 2 wave jumps, x cuBLASLt; compute-sanitizer over mode 2
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 bench/narrow.py $OUT/nt wgmma .gpu/s19/sk1.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/nt timeout 300 build/aitune sweep .gpu/s19/probe1.yaml --db $OUT/p.db --vendor time --quiet > $OUT/p.txt 2> $OUT/p.err
echo "probe exit $? in $(( $(date +%s) - t0 )) s"; tail -2 $OUT/p.err
python3 - $OUT/p.db > $OUT/probe.txt <<'PY'
import sqlite3, sys, json
con = sqlite3.connect(sys.argv[1])
ven = {}
for s, us in con.execute("select shape, median_us from vendor_times where status='ok'"):
    d = json.loads(s); ven[(d["n"], d["m"])] = us
rows = {}
bad = 0
for sh, st, us, c in con.execute("select shape, status, median_us, config from measurements"):
    d = json.loads(sh); c = json.loads(c)
    if st != 'ok': bad += 1; print("NOT OK", st, d, c); continue
    key = (d["n"], d["m"]); tag = "%dx%d %s sk%d" % (c["bm"], c["bn"], c["cluster"], c["streamk"])
    rows.setdefault(key, {})
    rows[key][tag] = min(us, rows[key].get(tag, 1e9))
tags = sorted({t for r in rows.values() for t in r})
print("n m cuBLASLt " + " ".join(t.replace(" ", "_") for t in tags) + " best x")
for key in sorted(rows):
    r = rows[key]; b = min(r.values())
    print("%d %d %.1f " % (key[0], key[1], ven.get(key, 0)) + " ".join("%.1f" % r.get(t, 0) for t in tags) + " %.1f %.3f" % (b, ven.get(key, 0) / b))
print("not ok:", bad)
PY
cat $OUT/probe.txt
python3 bench/narrow.py $OUT/ns wgmma .gpu/s19/san1.lua || exit 1
t0=$(date +%s)
AITUNE_HOME=$OUT/ns SANITIZE_SPEC=.gpu/s19/san1.yaml SANITIZE_ARGS="--vendor off" timeout 200 tests/gpu/sanitize.sh $OUT/san
echo "sanitize exit $? in $(( $(date +%s) - t0 )) s"
rm -rf $OUT/nt $OUT/ns; gzip $OUT/p.db; rm -f $OUT/p.db.lock $OUT/p.txt
tar czf $OUT/san.tgz -C $OUT san && rm -rf $OUT/san
